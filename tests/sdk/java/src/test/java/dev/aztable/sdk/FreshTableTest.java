package dev.aztable.sdk;

import com.azure.data.tables.TableClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Base of the test classes whose every test gets a table of its own, deleted after it. */
abstract class FreshTableTest {
    protected Aztable.FreshTable table;
    protected TableClient client;

    @BeforeEach
    void createTable() {
        table = Aztable.freshTable();
        client = table.client;
    }

    @AfterEach
    void deleteTable() {
        table.close();
    }
}
