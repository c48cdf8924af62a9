package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static dev.aztable.sdk.Aztable.expectHttpError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableAccessPolicies;
import com.azure.data.tables.models.TableAccessPolicy;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableSignedIdentifier;
import com.azure.data.tables.sas.TableSasPermission;
import com.azure.data.tables.sas.TableSasSignatureValues;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Get / Set Table ACL through getAccessPolicies / setAccessPolicies, and SAS tokens naming a policy. */
class AccessPolicyTest {
    private Aztable.FreshTable table;
    private TableClient owner;

    @BeforeEach
    void setUp() {
        table = Aztable.freshTable();
        owner = table.client;
        owner.createEntity(new TableEntity("p", "r").addProperty("v", 1));
    }

    @AfterEach
    void tearDown() {
        table.close();
    }

    private static TableSignedIdentifier policy(String id, OffsetDateTime start, OffsetDateTime expiry,
        String permissions) {
        return new TableSignedIdentifier(id).setAccessPolicy(new TableAccessPolicy().setStartsOn(start)
            .setExpiresOn(expiry).setPermissions(permissions));
    }

    /** The SDK reads an empty <SignedIdentifiers/> as null. */
    private static List<TableSignedIdentifier> ids(TableAccessPolicies policies) {
        return policies.getIdentifiers() == null ? List.of() : policies.getIdentifiers();
    }

    @Test
    void setAndGetAccessPoliciesRoundTrip() {
        assertEquals(List.of(), ids(owner.getAccessPolicies()), "a new table has none");
        OffsetDateTime start = OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 123_456_700, ZoneOffset.UTC);
        OffsetDateTime expiry = OffsetDateTime.of(2099, 12, 31, 0, 0, 0, 0, ZoneOffset.UTC);
        owner.setAccessPolicies(List.of(
            policy("reader", start, expiry, "r"),
            policy("full", start, expiry, "raud"),
            new TableSignedIdentifier("bare")));
        TableAccessPolicies got = owner.getAccessPolicies();
        assertEquals(List.of("reader", "full", "bare"),
            got.getIdentifiers().stream().map(TableSignedIdentifier::getId).collect(Collectors.toList()));
        TableAccessPolicy full = got.getIdentifiers().get(1).getAccessPolicy();
        assertEquals("raud", full.getPermissions());
        // setAccessPolicies truncates the times to whole seconds before sending them
        assertEquals(start.truncatedTo(ChronoUnit.SECONDS).toInstant(), full.getStartsOn().toInstant());
        assertEquals(expiry.toInstant(), full.getExpiresOn().toInstant());
        // an identifier without a policy is written back bare, without <AccessPolicy>
        assertNull(got.getIdentifiers().get(2).getAccessPolicy());

        // an empty list clears them
        owner.setAccessPolicies(List.of());
        assertEquals(List.of(), ids(owner.getAccessPolicies()));
    }

    @Test
    void sixPoliciesAre400AndChangeNothing() {
        OffsetDateTime expiry = OffsetDateTime.now(ZoneOffset.UTC).plusDays(1);
        owner.setAccessPolicies(List.of(policy("one", null, expiry, "r")));
        List<TableSignedIdentifier> six = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            six.add(policy("p" + i, null, expiry, "r"));
        }
        expectHttpError(400, "InvalidXmlDocument", () -> owner.setAccessPolicies(six));
        assertEquals(List.of("one"), owner.getAccessPolicies().getIdentifiers().stream()
            .map(TableSignedIdentifier::getId).collect(Collectors.toList()));
    }

    @Test
    void aSasNamingAPolicyTakesItsFieldsFromThePolicy() {
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS);
        owner.setAccessPolicies(List.of(
            policy("reader", now.minusMinutes(5), now.plusHours(1), "r"),
            policy("expired", now.minusHours(2), now.minusHours(1), "raud")));
        TableClient reader = Aztable.sasTable(table.name, owner.generateSas(new TableSasSignatureValues("reader")));
        assertEquals(1, reader.getEntity("p", "r").getProperty("v"));
        expectError(403, "AuthorizationPermissionMismatch", () -> reader.createEntity(new TableEntity("p", "n")));
        TableClient expired = Aztable.sasTable(table.name, owner.generateSas(new TableSasSignatureValues("expired")));
        expectError(403, "AuthenticationFailed", () -> expired.getEntity("p", "r"));

        // deleting the policy revokes the SAS; re-creating it restores it
        owner.setAccessPolicies(List.of());
        expectError(403, "AuthorizationFailure", () -> reader.getEntity("p", "r"));
        owner.setAccessPolicies(List.of(policy("reader", now.minusMinutes(5), now.plusHours(1), "r")));
        assertEquals(1, reader.getEntity("p", "r").getProperty("v"));

        // a field both in the token and in the policy is 400
        String both = owner.generateSas(new TableSasSignatureValues("reader")
            .setPermissions(TableSasPermission.parse("r")));
        expectError(400, (String) null, () -> Aztable.sasTable(table.name, both).getEntity("p", "r"));
    }
}
