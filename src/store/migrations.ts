/**
 * Versioned schema migrations, applied in order at start under an advisory lock (PostgreSQL)
 * or a write transaction (SQLite) so that several instances starting together apply each one
 * once. The migrations are written in PostgreSQL's SQL; SQLite runs the same ones spelled its
 * way, on the same version line. A database on a newer schema than this build knows is refused
 * with a clear message instead of being misread.
 */
import { ServiceError } from "../errors.ts";
import type { Queryable, Store } from "./store.ts";

/** One schema change. Never edit a released migration: add a new one. */
export interface Migration {
  version: number;
  name: string;
  /** Statements separated by `;` (none may contain one). */
  sql: string;
  /** Statements run after `sql` as they are, for those that contain `;` (function bodies). */
  statements?: readonly string[];
  /** SQLite's `statements`: its triggers are its own, not a respelling of PostgreSQL's. */
  sqliteStatements?: readonly string[];
}

/** Every PostgreSQL migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "payment ledger, kept paid answers, in-flight payments",
    sql: `
      create table ledger (
        id bigserial primary key,
        request_id text not null,
        route text not null,
        payer text not null,
        amount_atomic numeric(78, 0) not null,
        asset text not null,
        network text not null,
        nonce text not null,
        valid_before bigint,
        request_hash text not null,
        outcome text not null check (outcome in ('pending', 'settled', 'not_charged', 'settlement_failed', 'settlement_unknown')),
        status integer,
        reason text,
        settlement_tx text,
        instance text not null,
        created_at timestamptz not null default now(),
        finished_at timestamptz
      );
      create index ledger_payment on ledger (payer, nonce);
      create index ledger_created on ledger (created_at);
      create index ledger_open on ledger (outcome) where outcome in ('pending', 'settlement_unknown');

      create table paid_answers (
        payer text not null,
        nonce text not null,
        request_hash text not null,
        status integer not null,
        headers jsonb not null,
        body text not null,
        settlement_tx text not null,
        expires_at timestamptz not null,
        created_at timestamptz not null default now(),
        primary key (payer, nonce)
      );
      create index paid_answers_expiry on paid_answers (expires_at);

      create table inflight (
        key text primary key,
        instance text not null,
        expires_at timestamptz not null
      );
    `,
  },
  {
    version: 2,
    name: "trust leaderboard runs and rows",
    sql: `
      create table trust_runs (
        id bigserial primary key,
        trigger text not null,
        status text not null check (status in ('running', 'done', 'failed')),
        started_at timestamptz not null default now(),
        finished_at timestamptz,
        summary jsonb,
        error text
      );
      create index trust_runs_done on trust_runs (id) where status = 'done';

      create table trust_rows (
        run_id bigint not null references trust_runs (id) on delete cascade,
        origin text not null,
        endpoint text not null,
        method text not null,
        endpoints integer not null,
        reachable boolean not null,
        status integer,
        score integer not null check (score between 0 and 100),
        verdict text not null check (verdict in ('pay', 'pay_with_caution', 'avoid')),
        penalties jsonb not null,
        checks jsonb not null,
        price_usd numeric,
        pay_to text,
        network text,
        x402_version integer,
        reputation jsonb not null,
        latency_ms integer,
        probed_at timestamptz not null,
        primary key (run_id, origin)
      );
      create index trust_rows_origin on trust_rows (origin, run_id desc);
    `,
  },
  {
    version: 3,
    name: "ledger rows know when their payment was verified; kept answers bound to the exact payment",
    sql: `
      alter table ledger add column verified_at timestamptz;
      update ledger set verified_at = created_at where outcome in ('settled', 'settlement_failed', 'settlement_unknown');
      alter table paid_answers add column payment_hash text not null default ''
    `,
  },
  {
    version: 4,
    name: "paid retries redeemable by payment-identifier id or Sign-In-With-X; kept answers belong to the payment",
    sql: `
      alter table ledger add column payment_id text;
      create index ledger_payment_id on ledger (payment_id) where payment_id is not null;
      create index ledger_settled_request on ledger (payer, request_hash) where outcome = 'settled';
      alter table paid_answers drop column payment_hash;
      create table siwx_nonces (
        nonce text primary key,
        expires_at timestamptz not null
      );
      create index siwx_nonces_expiry on siwx_nonces (expires_at)
    `,
  },
  {
    version: 5,
    name: "trust runs record the rules version they scored with; rows keep payable, conformant and discoverable",
    sql: `
      alter table trust_runs add column rules_version integer not null default 1;
      alter table trust_runs alter column rules_version drop default;
      alter table trust_rows add column payable boolean;
      alter table trust_rows add column conformant boolean;
      alter table trust_rows add column discoverable boolean
    `,
  },
  {
    version: 6,
    name: "prepaid balances credited by settled top-ups, debited per chat message",
    sql: `
      create table balances (
        wallet text primary key,
        balance_atomic numeric(78, 0) not null default 0 check (balance_atomic >= 0),
        updated_at timestamptz not null default now()
      );
      create table balance_movements (
        id bigserial primary key,
        wallet text not null,
        at timestamptz not null default now(),
        kind text not null check (kind in ('topup', 'debit')),
        amount_atomic numeric(78, 0) not null check (amount_atomic > 0),
        route text not null,
        request_id text not null,
        ledger_id bigint unique
      );
      create index balance_movements_wallet on balance_movements (wallet, id desc);
      create index ledger_settled_route on ledger (payer, route, created_at) where outcome = 'settled'
    `,
    statements: [
      // A top-up's ledger row turning settled, on any path, credits its payer once (ledger_id is unique).
      `create function credit_settled_topup() returns trigger language plpgsql as $fn$
       begin
         if new.outcome = 'settled' and new.route = 'POST /api/balance/topup'
            and (tg_op = 'INSERT' or old.outcome is distinct from 'settled') then
           insert into balance_movements (wallet, kind, amount_atomic, route, request_id, ledger_id)
             values (new.payer, 'topup', new.amount_atomic, new.route, new.request_id, new.id)
             on conflict (ledger_id) do nothing;
           if found then
             insert into balances (wallet, balance_atomic) values (new.payer, new.amount_atomic)
               on conflict (wallet) do update set balance_atomic = balances.balance_atomic + excluded.balance_atomic, updated_at = now();
           end if;
         end if;
         return new;
       end
       $fn$`,
      "create trigger ledger_credits_topups after insert or update of outcome on ledger for each row execute function credit_settled_topup()",
    ],
    sqliteStatements: [
      // The same on SQLite (ledger_id is unique, and SQLite runs one writer at a time, so the check cannot race).
      ...(["insert", "update of outcome"] as const).map(
        (
          event,
        ) => `create trigger ledger_credits_topups_on_${event === "insert" ? "insert" : "update"} after ${event} on ledger for each row
         when new.outcome = 'settled' and new.route = 'POST /api/balance/topup'
           ${event === "insert" ? "" : "and old.outcome is not 'settled'"}
           and not exists (select 1 from balance_movements where ledger_id = new.id)
         begin
           insert into balance_movements (wallet, kind, amount_atomic, route, request_id, ledger_id)
             values (new.payer, 'topup', new.amount_atomic, new.route, new.request_id, new.id);
           insert into balances (wallet, balance_atomic) values (new.payer, new.amount_atomic)
             on conflict (wallet) do update set balance_atomic = balances.balance_atomic + excluded.balance_atomic, updated_at = now();
         end`,
      ),
    ],
  },
  {
    version: 7,
    name: "instance heartbeats, scheduled jobs claimed once per period across instances, stored status documents",
    sql: `
      create table instances (
        id text primary key,
        process text not null,
        started_at timestamptz not null default now(),
        last_seen timestamptz not null default now(),
        version text not null,
        settlement_address text
      );
      create index instances_settlement on instances (settlement_address) where settlement_address is not null;

      create table jobs (
        name text primary key,
        due_at timestamptz not null,
        holder text,
        lease_until timestamptz
      );
      create table job_runs (
        id bigserial primary key,
        job text not null,
        instance text not null,
        trigger text not null,
        started_at timestamptz not null default now(),
        finished_at timestamptz,
        outcome text not null check (outcome in ('running', 'ok', 'failed', 'interrupted')),
        detail text
      );
      create index job_runs_job on job_runs (job, id desc);

      create table status_documents (
        id bigserial primary key,
        generated_at timestamptz not null,
        instance text not null,
        body text not null,
        groups jsonb not null,
        last_success jsonb not null
      );
      create index status_documents_generated on status_documents (generated_at desc)
    `,
  },
  {
    version: 8,
    name: "rate-limit token buckets shared by the instances on one database",
    // Unlogged: a bucket lost in a crash only means a client's budget starts full again.
    sql: `
      create unlogged table rate_buckets (
        key text primary key,
        tokens double precision not null,
        at_ms bigint not null,
        allowed boolean not null
      );
      create index rate_buckets_idle on rate_buckets (at_ms)
    `,
  },
  {
    version: 9,
    name: "our own purchases (a trust run verifying sellers by buying from them), kept apart from income",
    sql: `
      create table our_purchases (
        id bigserial primary key,
        run_id bigint,
        origin text not null,
        endpoint text not null,
        method text not null,
        payer text not null,
        pay_to text,
        network text not null,
        asset text not null,
        price_atomic numeric(78, 0) not null,
        signed_atomic numeric(78, 0) not null,
        signed integer not null,
        settlements integer not null,
        charged_atomic numeric(78, 0) not null,
        outcome text not null check (outcome in ('served', 'charged_without_service', 'refused_after_signing', 'settled_twice', 'not_signed')),
        status integer,
        content_type text,
        body_bytes integer not null,
        settlement_tx text,
        detail text not null,
        created_at timestamptz not null
      );
      create index our_purchases_origin on our_purchases (origin, created_at desc);
      create index our_purchases_run on our_purchases (run_id)
    `,
  },
  {
    version: 10,
    name: "a payment (payer, nonce) has at most one settled ledger row; later duplicates end as same_payment_settled_once",
    // One authorisation can move money once, so two settled rows of it are one payment counted
    // twice. Rows an earlier build settled twice (a crash between settling a retry's row and
    // closing the earlier one, then the upkeep settling that one from the same transfer) keep
    // their first settled row; the later ones end not charged, as they would now, so the index
    // can be built. A top-up credited twice that way keeps its second credit: a balance may be
    // spent already, so it is left to the operator (its movement names the ledger row).
    sql: `
      update ledger set outcome = 'not_charged', reason = 'same_payment_settled_once'
        where outcome = 'settled'
          and exists (select 1 from ledger kept where kept.payer = ledger.payer and kept.nonce = ledger.nonce and kept.outcome = 'settled' and kept.id < ledger.id);
      create unique index ledger_settled_once on ledger (payer, nonce) where outcome = 'settled'
    `,
  },
  {
    version: 11,
    name: "ledger rows keep the client address that presented the payment",
    // A settled authorisation is public on chain: a bare retry of it is answered only to the
    // client that paid. Rows written before stay null and keep the earlier rule.
    sql: "alter table ledger add column client_address text",
  },
];

/**
 * How a PostgreSQL migration is spelled in SQLite. The declared types PostgreSQL names
 * (`timestamptz`, `jsonb`, `boolean`, `numeric(78,0)`) are kept, as src/store/sqlite.ts reads
 * columns back by them; timestamps are ISO-8601 UTC text. SQLite's migrations before 8 only
 * ever run on a new file (it joined the version line at 8), so no row is there to fill.
 */
const SQLITE_SPELLING: readonly [RegExp, string][] = [
  [/bigserial primary key/g, "integer primary key autoincrement"],
  // SQLite takes an expression as a default only in parentheses.
  [/default now\(\)/g, "default (now())"],
  // Amounts are 64-bit integers (exact up to 9.2 × 10^18 atomic units, 9.2 trillion USDC): a
  // larger one, which SQLite would silently round to a float, fails the `typeof` check instead.
  [/(\w+) numeric\(78, 0\)/g, "$1 numeric(78,0) check (typeof($1) = 'integer')"],
  // A decimal price is kept as text: SQLite's numeric affinity would turn it into a float.
  [/ numeric(?=,|\n)/g, " text"],
  // Unlogged tables are PostgreSQL's; SQLite has only the one kind.
  [/create unlogged table/g, "create table"],
  // A default that only filled the rows a table had, dropped at once: SQLite (no `alter column`)
  // adds the not-null column to its empty table without one.
  [/ default [^;]+;\s*alter table \w+ alter column \w+ drop default/g, ""],
];

/** Every SQLite migration, oldest first: PostgreSQL's, spelled for SQLite, with SQLite's own triggers. */
export const SQLITE_MIGRATIONS: readonly Migration[] = MIGRATIONS.map(({ version, name, sql, sqliteStatements }) => ({
  version,
  name,
  sql: SQLITE_SPELLING.reduce((text, [pattern, spelling]) => text.replace(pattern, spelling), sql),
  ...(sqliteStatements ? { statements: sqliteStatements } : {}),
}));

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** 503 at start: the database was migrated by a newer build. */
export class SchemaTooNewError extends ServiceError {
  override name = "SchemaTooNewError";
  constructor(found: number) {
    super(
      "unavailable",
      `The database is on schema version ${found}, newer than this build knows (${SCHEMA_VERSION}); run a build at least as new as the one that migrated it.`,
    );
  }
}

async function currentVersion(db: Queryable): Promise<number> {
  const [row] = await db.query<{ version: number | null }>("select cast(max(version) as integer) as version from schema_migrations");
  return row?.version ?? 0;
}

/** Apply every pending migration; returns the versions applied. */
export async function migrate(store: Store): Promise<number[]> {
  const sqlite = store.engine === "sqlite";
  return store.atomic(async (tx) => {
    // SQLite's transaction already holds the file's write lock (begin immediate).
    if (!sqlite) await tx.query("select pg_advisory_xact_lock(402100)");
    await tx.query(
      `create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default ${sqlite ? "(now())" : "now()"})`,
    );
    const found = await currentVersion(tx);
    if (found > SCHEMA_VERSION) throw new SchemaTooNewError(found);
    const applied: number[] = [];
    for (const migration of sqlite ? SQLITE_MIGRATIONS : MIGRATIONS) {
      if (migration.version <= found) continue;
      for (const statement of migration.sql
        .split(";")
        .map((s) => s.trim())
        .filter(Boolean))
        await tx.query(statement);
      for (const statement of migration.statements ?? []) await tx.query(statement);
      await tx.query("insert into schema_migrations (version, name) values ($1, $2)", [migration.version, migration.name]);
      applied.push(migration.version);
    }
    return applied;
  });
}
