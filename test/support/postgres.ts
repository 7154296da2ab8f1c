/** A fresh database on the test PostgreSQL server (TEST_DATABASE_URL), dropped afterwards. */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openStore, type Store } from "../../src/store/store.ts";

/** Create a new empty database next to `adminUrl`'s; returns its URL and a function that drops it. */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** A migrated store on a fresh database of `adminUrl`'s server; closing the store drops the database. */
export async function freshPostgresStore(adminUrl: string): Promise<Store> {
  const db = await freshDatabase(adminUrl);
  const store = await openStore({ kind: "postgres", url: db.url });
  return {
    ...store,
    close: async () => {
      await store.close();
      await db.drop();
    },
  };
}
