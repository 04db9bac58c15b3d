#if Postgres
import PostgresNIO

// MARK: - The schema

/// The tables, indexes and server-side checks Chronicle keeps in PostgreSQL, and their migration.
///
/// Everything lives in the PostgreSQL schema `chronicle`: `chronicle.logs`, `chronicle.entries`,
/// `chronicle.checkpoints`, `chronicle.stream_devices` (who may append to a shared stream), and
/// `chronicle.chronicle_schema`, which records the versions applied.
/// ``migrate(_:)-(PostgresClient)`` creates the schema or brings it up to ``currentVersion``, each migration in one
/// transaction; a shipper only checks the version (``check(_:)-(PostgresClient)``) and never changes the schema.
/// `docs/postgres.md` documents every column.
///
/// ```swift
/// try await PostgresSchema.migrate(client)
/// ```
public enum PostgresSchema {
  /// The version this library creates, migrates to and ships to.
  public static let currentVersion = 6

  /// Creates the schema, or migrates an older one to ``currentVersion``, in one transaction per
  /// migration, holding an advisory lock so two processes migrating at once do not collide.
  /// Returns the version found before (0 for none).
  ///
  /// - Throws: ``ShipError/newerSchema(found:supported:)`` if the server holds a newer version (it
  ///   changes nothing then), or the server's error.
  @discardableResult
  public static func migrate(_ client: PostgresClient) async throws -> Int {
    try await client.withConnection { connection in
      try await migrate(connection)
    }
  }

  /// ``migrate(_:)-(PostgresClient)`` on one connection (outside any transaction).
  @discardableResult
  public static func migrate(_ connection: PostgresConnection) async throws -> Int {
    let logger = PostgresLogging.quiet
    var found: Int?
    while true {
      try await connection.query("BEGIN", logger: logger)
      do {
        try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
        try await connection.query("CREATE SCHEMA IF NOT EXISTS chronicle", logger: logger)
        try await connection.query(
          """
          CREATE TABLE IF NOT EXISTS chronicle.chronicle_schema (
            version integer PRIMARY KEY,
            migrated timestamptz NOT NULL DEFAULT now()
          )
          """, logger: logger)
        let version = try await storedVersion(connection) ?? 0
        if found == nil { found = version }
        guard version <= currentVersion else {
          throw ShipError.newerSchema(found: version, supported: currentVersion)
        }
        guard version < currentVersion else {
          try await connection.query("COMMIT", logger: logger)
          return found ?? version
        }
        for statement in migrations[version] {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await connection.query(
          "INSERT INTO chronicle.chronicle_schema (version) VALUES (\(version + 1))", logger: logger)
        try await connection.query("COMMIT", logger: logger)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw error
      }
    }
  }

  /// Checks that the server holds the schema at ``currentVersion``; returns it.
  ///
  /// - Throws: ``ShipError/noSchema(reason:)``, ``ShipError/olderSchema(found:supported:)`` or
  ///   ``ShipError/newerSchema(found:supported:)``: one line each, and nothing is written.
  @discardableResult
  public static func check(_ client: PostgresClient) async throws -> Int {
    try await client.withConnection { connection in try await check(connection) }
  }

  /// ``check(_:)-(PostgresClient)`` on one connection.
  @discardableResult
  public static func check(_ connection: PostgresConnection) async throws -> Int {
    let version: Int?
    do {
      version = try await storedVersion(connection)
    } catch let error as PSQLError {
      let state = error.serverInfo?[.sqlState]
      // 42P01: undefined table; 3F000: invalid schema name.
      if state == "42P01" || state == "3F000" {
        throw ShipError.noSchema(reason: "the server has no chronicle.chronicle_schema table")
      }
      throw error
    }
    guard let version else { throw ShipError.noSchema(reason: "chronicle.chronicle_schema records no version") }
    if version > currentVersion { throw ShipError.newerSchema(found: version, supported: currentVersion) }
    if version < currentVersion { throw ShipError.olderSchema(found: version, supported: currentVersion) }
    return version
  }

  private static func storedVersion(_ connection: PostgresConnection) async throws -> Int? {
    let rows = try await connection.query(
      "SELECT max(version) FROM chronicle.chronicle_schema", logger: PostgresLogging.quiet)
    for try await version in rows.decode(Int?.self) { return version }
    return nil
  }

  /// The key of the transaction-scoped advisory lock migrations hold (an arbitrary constant).
  private static let lockKey: Int64 = 0x4368_726F_6E69_636C

  // MARK: - Migrations

  /// `migrations[v]`: the statements that take version `v` to `v + 1`.
  static let migrations: [[String]] = [version1, version2, version3, version4, version5, version6]

  /// The body of `chronicle.tree_root` after it selected the entries (`entry`) from where its
  /// `stack` of complete subtrees, `depth` and `leaves` begin: each leaf merged with the subtrees it
  /// completes, then the root from what is left (versions 1 and 5 share it).
  static let treeRootFold = """
        node := sha256('\\x00'::bytea || int8send(entry.seq) || entry.body || entry.hash);
        rest := leaves;
        WHILE rest % 2 = 1 LOOP
          node := sha256('\\x01'::bytea || stack[depth] || node);
          depth := depth - 1;
          rest := rest / 2;
        END LOOP;
        depth := depth + 1;
        stack[depth] := node;
        leaves := leaves + 1;
      END LOOP;
      IF leaves <> size THEN
        RAISE EXCEPTION 'log % has % of the first % entries on the server', encode(target, 'hex'), leaves, size
          USING ERRCODE = 'CH005';
      END IF;
      node := stack[depth];
      FOR slot IN REVERSE depth - 1 .. 1 LOOP
        node := sha256('\\x01'::bytea || stack[slot] || node);
      END LOOP;
      RETURN node;
    """

  /// Version 1: logs, entries, checkpoints, their indexes and the server-side checks.
  static let version1: [String] = [
    """
    CREATE TABLE chronicle.logs (
      log_id bytea PRIMARY KEY CHECK (octet_length(log_id) = 16),
      origin text NOT NULL,
      app text NOT NULL,
      created timestamptz NOT NULL,
      registered timestamptz NOT NULL DEFAULT now(),
      anchor_seq bigint NOT NULL CHECK (anchor_seq >= 0),
      anchor_hash bytea NOT NULL CHECK (octet_length(anchor_hash) = 32),
      head_seq bigint NOT NULL CHECK (head_seq >= anchor_seq),
      head_hash bytea NOT NULL CHECK (octet_length(head_hash) = 32),
      shipped timestamptz
    )
    """,
    """
    CREATE TABLE chronicle.entries (
      log_id bytea NOT NULL REFERENCES chronicle.logs,
      seq bigint NOT NULL CHECK (seq >= 1),
      kind text NOT NULL,
      flags smallint NOT NULL,
      type_name text NOT NULL,
      "timestamp" timestamptz NOT NULL,
      metadata jsonb,
      codec text NOT NULL,
      schema_version bigint NOT NULL,
      payload bytea NOT NULL,
      payload_json jsonb,
      body bytea NOT NULL,
      hash bytea NOT NULL CHECK (octet_length(hash) = 32),
      previous_hash bytea NOT NULL CHECK (octet_length(previous_hash) = 32),
      PRIMARY KEY (log_id, seq)
    )
    """,
    "CREATE INDEX entries_type_name ON chronicle.entries (type_name, \"timestamp\")",
    "CREATE INDEX entries_timestamp ON chronicle.entries (\"timestamp\")",
    "CREATE INDEX entries_metadata ON chronicle.entries USING gin (metadata jsonb_path_ops)",
    """
    CREATE TABLE chronicle.checkpoints (
      log_id bytea NOT NULL REFERENCES chronicle.logs,
      size bigint NOT NULL CHECK (size >= 0),
      root bytea NOT NULL CHECK (octet_length(root) = 32),
      note text NOT NULL,
      received timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (log_id, size)
    )
    """,
    // Every statement that inserts entries is checked as a whole, after it ran and before its
    // transaction can commit: per log, the new entries continue the stored head without a gap, each
    // links to the one before it (the first to the stored head) and each hash is the SHA-256 of the
    // previous hash, the sequence number and the entry's bytes. Then the head moves. An error
    // aborts the transaction: nothing of the batch stays.
    """
    CREATE FUNCTION chronicle.check_entries() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      batch record;
      head record;
      bad bigint;
    BEGIN
      FOR batch IN
        SELECT log_id, min(seq) AS first, max(seq) AS last, count(*) AS n FROM new_entries GROUP BY log_id
      LOOP
        SELECT head_seq, head_hash INTO head FROM chronicle.logs WHERE log_id = batch.log_id FOR UPDATE;
        IF batch.first <> head.head_seq + 1 OR batch.n <> batch.last - batch.first + 1 THEN
          RAISE EXCEPTION 'entries % to % of log % do not continue its stored head % without a gap',
            batch.first, batch.last, encode(batch.log_id, 'hex'), head.head_seq USING ERRCODE = 'CH001';
        END IF;
        SELECT n.seq INTO bad FROM new_entries n
          LEFT JOIN new_entries p ON p.log_id = n.log_id AND p.seq = n.seq - 1
          WHERE n.log_id = batch.log_id
            AND (n.previous_hash IS DISTINCT FROM CASE WHEN n.seq = batch.first THEN head.head_hash ELSE p.hash END
              OR n.hash <> sha256(n.previous_hash || int8send(n.seq) || n.body))
          ORDER BY n.seq LIMIT 1;
        IF bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry % of log % does not link to the entry before it', bad, encode(batch.log_id, 'hex')
            USING ERRCODE = 'CH002';
        END IF;
        UPDATE chronicle.logs
          SET head_seq = batch.last, shipped = now(),
            head_hash = (SELECT hash FROM new_entries WHERE log_id = batch.log_id AND seq = batch.last)
          WHERE log_id = batch.log_id;
      END LOOP;
      RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER entries_chain AFTER INSERT ON chronicle.entries
      REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION chronicle.check_entries()
    """,
    """
    CREATE FUNCTION chronicle.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'chronicle.% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'CH003';
    END
    $$
    """,
    """
    CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON chronicle.entries
      FOR EACH ROW EXECUTE FUNCTION chronicle.refuse_change()
    """,
    """
    CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON chronicle.checkpoints
      FOR EACH ROW EXECUTE FUNCTION chronicle.refuse_change()
    """,
    // The RFC 9162 root of the first `size` entries, as the log's tree computes it: leaf
    // SHA-256(0x00 ‖ seq u64 BE ‖ stored value), node SHA-256(0x01 ‖ left ‖ right), the stored value
    // being the entry's bytes followed by its hash. One pass over the entries with a stack of
    // complete subtrees: O(size) hashes.
    """
    CREATE FUNCTION chronicle.tree_root(target bytea, size bigint) RETURNS bytea LANGUAGE plpgsql STABLE AS $$
    DECLARE
      stack bytea[] := '{}';
      depth integer := 0;
      leaves bigint := 0;
      node bytea;
      rest bigint;
      entry record;
    BEGIN
      IF size = 0 THEN RETURN sha256(''::bytea); END IF;
      IF (SELECT anchor_seq FROM chronicle.logs WHERE log_id = target) <> 0 THEN
        RAISE EXCEPTION 'log % was shipped from a compacted log: its first entries are not on the server',
          encode(target, 'hex') USING ERRCODE = 'CH005';
      END IF;
      FOR entry IN
        SELECT seq, body, hash FROM chronicle.entries WHERE log_id = target AND seq <= size ORDER BY seq
      LOOP
    \(treeRootFold)
    END
    $$
    """,
    // A checkpoint is stored only if it names this log, its size and root are those of its note,
    // its size is at most the shipped head, and the stored entries produce its root.
    """
    CREATE FUNCTION chronicle.check_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      stored record;
    BEGIN
      SELECT head_seq, origin INTO stored FROM chronicle.logs WHERE log_id = NEW.log_id FOR SHARE;
      IF split_part(NEW.note, E'\\n', 1) <> stored.origin OR split_part(NEW.note, E'\\n', 2) <> NEW.size::text
        OR split_part(NEW.note, E'\\n', 3) <> encode(NEW.root, 'base64') THEN
        RAISE EXCEPTION 'the checkpoint of size % does not name log % with that size and root',
          NEW.size, encode(NEW.log_id, 'hex') USING ERRCODE = 'CH004';
      END IF;
      IF NEW.size > stored.head_seq THEN
        RAISE EXCEPTION 'the checkpoint of size % of log % is beyond the % entries shipped',
          NEW.size, encode(NEW.log_id, 'hex'), stored.head_seq USING ERRCODE = 'CH004';
      END IF;
      IF NEW.root <> chronicle.tree_root(NEW.log_id, NEW.size) THEN
        RAISE EXCEPTION 'the checkpoint of size % of log % has a root the stored entries do not produce',
          NEW.size, encode(NEW.log_id, 'hex') USING ERRCODE = 'CH004';
      END IF;
      RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER checkpoints_check BEFORE INSERT ON chronicle.checkpoints
      FOR EACH ROW EXECUTE FUNCTION chronicle.check_checkpoint()
    """,
  ]

  /// Version 2: entries no longer carry a foreign key to `chronicle.logs`: its check ran once per
  /// row and cost more of the server's time than the rest of an insert (docs/postgres.md,
  /// "Performance"). The batch check does its work once per batch: it refuses entries of a log
  /// that `chronicle.logs` does not hold, and a log there can no longer be deleted. `TRUNCATE`,
  /// which skips row triggers, is refused on all three tables.
  static let version2: [String] = [
    "ALTER TABLE chronicle.entries DROP CONSTRAINT entries_log_id_fkey",
    checkEntries(
      firstBadLink: """
        SELECT n.seq INTO bad FROM new_entries n
          LEFT JOIN new_entries p ON p.log_id = n.log_id AND p.seq = n.seq - 1
          WHERE n.log_id = batch.log_id
            AND (n.previous_hash IS DISTINCT FROM CASE WHEN n.seq = batch.first THEN head.head_hash ELSE p.hash END
              OR n.hash <> sha256(n.previous_hash || int8send(n.seq) || n.body))
          ORDER BY n.seq LIMIT 1;
        """),
    """
    CREATE FUNCTION chronicle.refuse_log_removal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'a shipped log stays in chronicle.logs: % refused', TG_OP USING ERRCODE = 'CH003';
    END
    $$
    """,
    """
    CREATE TRIGGER logs_kept BEFORE DELETE ON chronicle.logs
      FOR EACH ROW EXECUTE FUNCTION chronicle.refuse_log_removal()
    """,
    """
    CREATE TRIGGER logs_kept_whole BEFORE TRUNCATE ON chronicle.logs
      FOR EACH STATEMENT EXECUTE FUNCTION chronicle.refuse_log_removal()
    """,
    """
    CREATE TRIGGER entries_append_only_whole BEFORE TRUNCATE ON chronicle.entries
      FOR EACH STATEMENT EXECUTE FUNCTION chronicle.refuse_change()
    """,
    """
    CREATE TRIGGER checkpoints_append_only_whole BEFORE TRUNCATE ON chronicle.checkpoints
      FOR EACH STATEMENT EXECUTE FUNCTION chronicle.refuse_change()
    """,
  ]

  /// Version 3: encrypted logs. `chronicle.logs.format_version` records the log's on-disk format
  /// (2: encrypted), which `logtool pull` needs even for a log without entries; `chronicle.entries.key_id`
  /// the identifier of the key that sealed an entry of an encrypted log (NULL in the clear), so an
  /// auditor finds what a removed key covered. The schema's checks work on the stored bytes and
  /// are unchanged. Entries of layout 2 that an older shipper stored (only one handed a log opened
  /// with its key ring could) get their key identifier and clear type name, and lose the decrypted
  /// metadata and payload: the server keeps what the device stores, never the plaintext.
  static let version3: [String] = [
    "ALTER TABLE chronicle.logs ADD COLUMN format_version integer NOT NULL DEFAULT 1 CHECK (format_version >= 1)",
    "ALTER TABLE chronicle.entries ADD COLUMN key_id bigint CHECK (key_id BETWEEN 0 AND 4294967295)",
    "CREATE INDEX entries_key_id ON chronicle.entries (key_id) WHERE key_id IS NOT NULL",
    "ALTER TABLE chronicle.entries DISABLE TRIGGER entries_append_only",
    // Layout 2 (docs/log-format.md, *Encrypted records*): byte 0 the layout, 16…19 the key
    // identifier, 32…33 the clear type name's length, then the name.
    """
    UPDATE chronicle.entries
      SET key_id = (get_byte(body, 16)::bigint << 24) | (get_byte(body, 17) << 16) | (get_byte(body, 18) << 8)
          | get_byte(body, 19),
        type_name = convert_from(substring(body FROM 35 FOR ((get_byte(body, 32) << 8) | get_byte(body, 33))), 'UTF8'),
        metadata = NULL, payload = ''::bytea, payload_json = NULL
      WHERE CASE WHEN octet_length(body) >= 54 THEN get_byte(body, 0) = 2 ELSE false END
    """,
    "ALTER TABLE chronicle.entries ENABLE TRIGGER entries_append_only",
    """
    UPDATE chronicle.logs SET format_version = 2
      WHERE EXISTS (SELECT 1 FROM chronicle.entries e WHERE e.log_id = chronicle.logs.log_id AND e.key_id IS NOT NULL)
    """,
  ]

  /// Version 4: the batch check links each entry to the one before it with `lag()` over the batch
  /// in sequence order instead of joining the new rows with themselves. PostgreSQL keeps the row
  /// count a session's first batch had in the plans it caches for the trigger's queries: after a
  /// first batch of one entry (a `follow` pass that starts with one new entry), the self-join ran
  /// as a nested loop, quadratic in the batch (300 ms to check a batch of 1,000, 3.3 s one of
  /// 4,000). A sort costs the same whatever the estimate. The gap check before it makes the rows consecutive, so
  /// the row before each is the entry before it. What the check refuses is unchanged.
  static let version4: [String] = [checkEntries(firstBadLink: linkByLag)]

  /// The batch check's search for the first entry that does not link (versions 4 and 6): `lag()`
  /// over the batch in sequence order.
  static let linkByLag = """
    SELECT n.seq INTO bad FROM (
        SELECT seq, previous_hash, hash, body, lag(hash) OVER (ORDER BY seq) AS prior
        FROM new_entries WHERE log_id = batch.log_id) n
      WHERE n.previous_hash IS DISTINCT FROM CASE WHEN n.seq = batch.first THEN head.head_hash ELSE n.prior END
        OR n.hash <> sha256(n.previous_hash || int8send(n.seq) || n.body)
      ORDER BY n.seq LIMIT 1;
    """

  /// Version 5: roots of a log shipped from a compacted log. `chronicle.logs.anchor_subtrees` holds
  /// the hashes of the complete subtrees of the log's first `anchor_seq` entries, the largest first
  /// (one per set bit of the anchor; the device sends them, and once set they stay), and
  /// `chronicle.tree_root` starts from them, so the checkpoints of a compacted log from its anchor
  /// on are checked like any other. A checkpoint older than the anchor still cannot be.
  static let version5: [String] = [
    """
    ALTER TABLE chronicle.logs ADD COLUMN anchor_subtrees bytea[]
      CHECK (anchor_subtrees IS NULL OR (anchor_seq > 0
        AND cardinality(anchor_subtrees) = length(replace(anchor_seq::bit(64)::text, '0', ''))))
    """,
    """
    CREATE FUNCTION chronicle.keep_anchor_subtrees() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.anchor_subtrees IS NOT NULL AND NEW.anchor_subtrees IS DISTINCT FROM OLD.anchor_subtrees THEN
        RAISE EXCEPTION 'the anchor subtrees of log % are set once and never changed', encode(OLD.log_id, 'hex')
          USING ERRCODE = 'CH003';
      END IF;
      RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER logs_anchor_subtrees_kept BEFORE UPDATE OF anchor_subtrees ON chronicle.logs
      FOR EACH ROW EXECUTE FUNCTION chronicle.keep_anchor_subtrees()
    """,
    """
    CREATE OR REPLACE FUNCTION chronicle.tree_root(target bytea, size bigint) RETURNS bytea LANGUAGE plpgsql STABLE AS $$
    DECLARE
      stack bytea[] := '{}';
      depth integer := 0;
      leaves bigint := 0;
      node bytea;
      rest bigint;
      entry record;
      log record;
    BEGIN
      IF size = 0 THEN RETURN sha256(''::bytea); END IF;
      SELECT anchor_seq, anchor_subtrees INTO log FROM chronicle.logs WHERE log_id = target;
      IF log.anchor_seq > 0 THEN
        IF size < log.anchor_seq THEN
          RAISE EXCEPTION 'log % starts on the server after entry %: the root of its first % entries cannot be recomputed',
            encode(target, 'hex'), log.anchor_seq, size USING ERRCODE = 'CH005';
        END IF;
        IF log.anchor_subtrees IS NULL THEN
          RAISE EXCEPTION 'log % was shipped from a compacted log without the tree hashes of its first % entries; ship it once more with this version to store them',
            encode(target, 'hex'), log.anchor_seq USING ERRCODE = 'CH005';
        END IF;
        stack := log.anchor_subtrees;
        depth := cardinality(stack);
        leaves := log.anchor_seq;
      END IF;
      FOR entry IN
        SELECT seq, body, hash FROM chronicle.entries
        WHERE log_id = target AND seq > coalesce(log.anchor_seq, 0) AND seq <= size ORDER BY seq
      LOOP
    \(treeRootFold)
    END
    $$
    """,
  ]

  /// Version 6: shared streams, logs that many devices append to in the order the server gives
  /// them (`PostgresStreamServer`). `chronicle.logs.shared` marks them; `chronicle.entries.device`
  /// names the device that appended an entry of one (NULL in a shipped log) and
  /// `chronicle.entries.appended_by` the database role that inserted the row (its default,
  /// `current_user`: a device's role may insert every column but that one, so it cannot name
  /// another); `chronicle.stream_devices` records which role may append as which device of a
  /// stream, append-only. The batch check also refuses an entry of a stream whose device is not
  /// registered for the role that inserted it, and an entry of a shipped log that names a device
  /// (CH006), with one query per batch; it runs as the schema's owner (`SECURITY DEFINER`), so a
  /// device's role moves the head without the right to update `chronicle.logs`, and after a batch of
  /// a stream it sends the notification `chronicle_entries` with the stream's identifier in hex and
  /// its new head (`<hex>:<seq>`). The checkpoint check runs as the owner too: it locks the log's
  /// row, which a role without UPDATE on `chronicle.logs` could not. Rows stored before this
  /// version name, in `appended_by`, the role that migrated.
  static let version6: [String] = [
    "ALTER TABLE chronicle.logs ADD COLUMN shared boolean NOT NULL DEFAULT false",
    "ALTER TABLE chronicle.entries ADD COLUMN device text",
    "ALTER TABLE chronicle.entries ADD COLUMN appended_by name NOT NULL DEFAULT current_user",
    """
    CREATE TABLE chronicle.stream_devices (
      log_id bytea NOT NULL REFERENCES chronicle.logs,
      device text NOT NULL CHECK (device <> ''),
      role name NOT NULL,
      registered timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (log_id, device)
    )
    """,
    """
    CREATE TRIGGER stream_devices_append_only BEFORE UPDATE OR DELETE ON chronicle.stream_devices
      FOR EACH ROW EXECUTE FUNCTION chronicle.refuse_change()
    """,
    """
    CREATE TRIGGER stream_devices_append_only_whole BEFORE TRUNCATE ON chronicle.stream_devices
      FOR EACH STATEMENT EXECUTE FUNCTION chronicle.refuse_change()
    """,
    """
    CREATE OR REPLACE FUNCTION chronicle.check_entries() RETURNS trigger LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = pg_catalog, chronicle, pg_temp AS $$
    DECLARE
      batch record;
      head record;
      bad bigint;
      stranger record;
    BEGIN
      FOR batch IN
        SELECT log_id, min(seq) AS first, max(seq) AS last, count(*) AS n, count(device) AS devices
        FROM new_entries GROUP BY log_id
      LOOP
        SELECT head_seq, head_hash, shared, app INTO head FROM chronicle.logs WHERE log_id = batch.log_id FOR UPDATE;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'entries % to % name log %, which chronicle.logs does not hold',
            batch.first, batch.last, encode(batch.log_id, 'hex') USING ERRCODE = 'CH001';
        END IF;
        IF batch.first <> head.head_seq + 1 OR batch.n <> batch.last - batch.first + 1 THEN
          RAISE EXCEPTION 'entries % to % of log % do not continue its stored head % without a gap',
            batch.first, batch.last, encode(batch.log_id, 'hex'), head.head_seq USING ERRCODE = 'CH001';
        END IF;
        IF head.shared THEN
          SELECT n.seq, n.device, n.appended_by INTO stranger FROM new_entries n
            WHERE n.log_id = batch.log_id AND NOT EXISTS (
              SELECT 1 FROM chronicle.stream_devices d
              WHERE d.log_id = n.log_id AND d.device = n.device
                -- The schema's owner (this function runs as it) puts back entries of any registered device.
                AND (d.role = n.appended_by OR n.appended_by = current_user))
            ORDER BY n.seq LIMIT 1;
          IF FOUND THEN
            RAISE EXCEPTION 'device % is not registered in stream % (log %) for role % (entry %)',
              coalesce(quote_literal(stranger.device), 'NULL'), quote_literal(head.app), encode(batch.log_id, 'hex'),
              quote_ident(stranger.appended_by), stranger.seq USING ERRCODE = 'CH006';
          END IF;
        ELSIF batch.devices > 0 THEN
          RAISE EXCEPTION 'entries % to % of log % name a device, and the log is not a shared stream',
            batch.first, batch.last, encode(batch.log_id, 'hex') USING ERRCODE = 'CH006';
        END IF;
    \(linkByLag)
        IF bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry % of log % does not link to the entry before it', bad, encode(batch.log_id, 'hex')
            USING ERRCODE = 'CH002';
        END IF;
        UPDATE chronicle.logs
          SET head_seq = batch.last, shipped = now(),
            head_hash = (SELECT hash FROM new_entries WHERE log_id = batch.log_id AND seq = batch.last)
          WHERE log_id = batch.log_id;
        IF head.shared THEN
          PERFORM pg_notify('chronicle_entries', encode(batch.log_id, 'hex') || ':' || batch.last);
        END IF;
      END LOOP;
      RETURN NULL;
    END
    $$
    """,
    """
    ALTER FUNCTION chronicle.check_checkpoint() SECURITY DEFINER SET search_path = pg_catalog, chronicle, pg_temp
    """,
  ]

  /// The batch check's function from version 2 on: per log of the statement's new entries, the log
  /// must be registered, the entries must continue its head without a gap, `firstBadLink` must
  /// find no entry (it sets `bad` to the first whose previous hash or hash is wrong), and the head
  /// moves to the last entry.
  static func checkEntries(firstBadLink: String) -> String {
    """
    CREATE OR REPLACE FUNCTION chronicle.check_entries() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      batch record;
      head record;
      bad bigint;
    BEGIN
      FOR batch IN
        SELECT log_id, min(seq) AS first, max(seq) AS last, count(*) AS n FROM new_entries GROUP BY log_id
      LOOP
        SELECT head_seq, head_hash INTO head FROM chronicle.logs WHERE log_id = batch.log_id FOR UPDATE;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'entries % to % name log %, which chronicle.logs does not hold',
            batch.first, batch.last, encode(batch.log_id, 'hex') USING ERRCODE = 'CH001';
        END IF;
        IF batch.first <> head.head_seq + 1 OR batch.n <> batch.last - batch.first + 1 THEN
          RAISE EXCEPTION 'entries % to % of log % do not continue its stored head % without a gap',
            batch.first, batch.last, encode(batch.log_id, 'hex'), head.head_seq USING ERRCODE = 'CH001';
        END IF;
    \(firstBadLink)
        IF bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry % of log % does not link to the entry before it', bad, encode(batch.log_id, 'hex')
            USING ERRCODE = 'CH002';
        END IF;
        UPDATE chronicle.logs
          SET head_seq = batch.last, shipped = now(),
            head_hash = (SELECT hash FROM new_entries WHERE log_id = batch.log_id AND seq = batch.last)
          WHERE log_id = batch.log_id;
      END LOOP;
      RETURN NULL;
    END
    $$
    """
  }
}

// MARK: - Logging

/// The logger the library passes to postgres-nio: it reports through errors, never through logs.
enum PostgresLogging {
  static let quiet: Logger = {
    var logger = Logger(label: "chronicle.postgres")
    logger.logLevel = .critical
    return logger
  }()
}
#endif  // Postgres
