// Testcontainers for Java's Azurite module (org.testcontainers:testcontainers-azure) with
// aztable's image in place of Azurite's: the module starts it, waits its own way (the
// three exposed ports listen, inside the container and from the host), and
// azure-data-tables runs a table round trip through the module's connection string,
// over HTTP, then over HTTPS with withSsl: a PEM certificate and key (the key a file of
// mode 0600, which the module copies in owned by root) and a PFX with its password.
// The certificate names the host the module reports (getHost()), made with the JDK's
// keytool; the client trusts it through javax.net.ssl.trustStore.
//
// Usage: mvn -q exec:java -Dexec.args=IMAGE (scripts/container-test.sh, MODULES=1).
package aztable;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import org.testcontainers.azure.AzuriteContainer;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

public final class Modules {
    private static final String PASSWORD = "aztable-test";

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: Modules IMAGE");
        }
        DockerImageName image = DockerImageName.parse(args[0])
            .asCompatibleSubstituteFor("mcr.microsoft.com/azure-storage/azurite");

        String host;
        try (AzuriteContainer azurite = new AzuriteContainer(image)) {
            long t = System.nanoTime();
            azurite.start();
            System.out.printf("   java module: started and waited (three ports) in %.1f s%n", seconds(t));
            host = azurite.getHost();
            roundTrip(azurite.getConnectionString(), "http");
        }

        Path dir = Files.createTempDirectory("aztable-java-tls");
        Path pfx = makeCertificate(dir, host);
        System.setProperty("javax.net.ssl.trustStore", pfx.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", PASSWORD);
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");

        MountableFile cert = MountableFile.forHostPath(dir.resolve("cert.pem"));
        MountableFile key = MountableFile.forHostPath(dir.resolve("key.pem"));
        try (AzuriteContainer azurite = new AzuriteContainer(image).withSsl(cert, key)) {
            long t = System.nanoTime();
            azurite.start();
            System.out.printf("   java module: withSsl(PEM, key of mode 0600) started and waited in %.1f s%n", seconds(t));
            String mode = azurite.execInContainer("/bin/sh", "-c", "ls -ln /key.pem").getStdout().trim();
            if (!mode.startsWith("-rw-------") || !mode.contains(" 0 ")) {
                throw new AssertionError("the key should be root's, mode 0600: " + mode);
            }
            System.out.println("   java module: in the container: " + mode.replaceAll("\\s+", " "));
            roundTrip(azurite.getConnectionString(), "https (PEM)");
        }
        try (AzuriteContainer azurite =
                 new AzuriteContainer(image).withSsl(MountableFile.forHostPath(pfx), PASSWORD)) {
            azurite.start();
            roundTrip(azurite.getConnectionString(), "https (PFX)");
        }
    }

    /** Create a table, insert, get, query, delete the entity and the table. */
    private static void roundTrip(String connectionString, String what) {
        if (!connectionString.startsWith("DefaultEndpointsProtocol=" + what.split(" ")[0] + ";")) {
            throw new AssertionError(what + ": " + connectionString);
        }
        TableServiceClient service = new TableServiceClientBuilder().connectionString(connectionString).buildClient();
        String name = "java" + Long.toHexString(System.nanoTime());
        TableClient table = service.createTable(name);
        table.createEntity(new TableEntity("p", "1").addProperty("Name", "Ada").addProperty("Age", 36));
        table.createEntity(new TableEntity("p", "2").addProperty("Name", "Grace").addProperty("Age", 45));
        TableEntity got = table.getEntity("p", "1");
        check("Ada".equals(got.getProperty("Name")) && Integer.valueOf(36).equals(got.getProperty("Age")), got);
        List<String> names = new ArrayList<>();
        table.listEntities(new ListEntitiesOptions().setFilter("PartitionKey eq 'p' and Age gt 40"), null, null)
            .forEach(e -> names.add((String) e.getProperty("Name")));
        check(names.equals(List.of("Grace")), names);
        table.deleteEntity("p", "1");
        table.deleteEntity("p", "2");
        List<String> left = new ArrayList<>();
        table.listEntities().forEach(e -> left.add(e.getRowKey()));
        check(left.isEmpty(), left);
        service.deleteTable(name);
        System.out.println("   java module: azure-data-tables over " + what + " through its connection string: ok");
    }

    private static void check(boolean ok, Object what) {
        if (!ok) {
            throw new AssertionError(String.valueOf(what));
        }
    }

    /**
     * A self-signed certificate for {@code host}, 127.0.0.1 and localhost: cert.pem,
     * key.pem (mode 0600) and the PKCS#12 file keytool made them from (returned).
     */
    private static Path makeCertificate(Path dir, String host) throws Exception {
        Path pfx = dir.resolve("cert.pfx");
        boolean ip = isIpAddress(host);
        String san = (ip ? "ip:" : "dns:") + host + ",ip:127.0.0.1,dns:localhost";
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "aztable", "-keyalg", "RSA",
            "-keysize", "2048", "-validity", "2", "-dname", "CN=" + host, "-ext", "san=" + san,
            "-storetype", "PKCS12", "-keystore", pfx.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
            .inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException("keytool failed");
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(pfx)) {
            store.load(in, PASSWORD.toCharArray());
        }
        Key key = store.getKey("aztable", PASSWORD.toCharArray());
        Certificate cert = store.getCertificate("aztable");
        Path keyPem = dir.resolve("key.pem");
        Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(keyPem, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("cert.pem"), pem("CERTIFICATE", cert.getEncoded()), StandardCharsets.US_ASCII);
        System.out.println("   java module: certificate for " + san);
        return pfx;
    }

    private static boolean isIpAddress(String host) {
        return host.matches("[0-9.]+") || host.contains(":");
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
