package dev.aztable.sdk;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A private in-memory aztable (the binary in AZTABLE_BINARY, which scripts/sdk-tests.sh
 * exports) on a free port, for tests that change account-wide state or need server flags.
 */
final class OwnServer implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on http://([0-9.]+):(\\d+)");

    final Process process;
    final String host;
    final int port;
    final String endpoint;

    private OwnServer(Process process, String host, int port) {
        this.process = process;
        this.host = host;
        this.port = port;
        this.endpoint = "http://" + host + ":" + port + "/" + Aztable.WELL_KNOWN_ACCOUNT;
    }

    /** The binary to start, or null when the suite runs against a server it did not start. */
    static String binary() {
        return Aztable.env("AZTABLE_BINARY");
    }

    static OwnServer start(String... extraArgs) throws IOException, InterruptedException {
        String binary = binary();
        if (binary == null) {
            throw new IllegalStateException("AZTABLE_BINARY is not set");
        }
        List<String> cmd = new ArrayList<>(List.of(binary, "--tableHost", "127.0.0.1", "--tablePort", "0",
            "--inMemoryPersistence", "--silent"));
        cmd.addAll(List.of(extraArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        // the default account, whatever the environment says
        pb.environment().remove("AZURITE_ACCOUNTS");
        Process p = pb.start();
        // no server outlives the test JVM, however the run ends
        Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
        CompletableFuture<Matcher> found = new CompletableFuture<>();
        StringBuilder seen = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (!found.isDone()) {
                        synchronized (seen) {
                            seen.append(line).append('\n');
                        }
                        Matcher m = LISTENING.matcher(line);
                        if (m.find()) {
                            found.complete(m);
                        }
                    }
                }
            } catch (IOException e) {
                found.completeExceptionally(e);
            }
            found.completeExceptionally(new IllegalStateException("server output ended"));
        }, "aztable-output");
        reader.setDaemon(true);
        reader.start();
        try {
            Matcher m = found.get(30, TimeUnit.SECONDS);
            return new OwnServer(p, m.group(1), Integer.parseInt(m.group(2)));
        } catch (Exception e) {
            p.destroyForcibly();
            synchronized (seen) {
                throw new IllegalStateException("aztable did not report its port: " + seen, e);
            }
        }
    }

    String connectionString() {
        return Aztable.connectionStringFor(endpoint);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
