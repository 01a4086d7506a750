#!/usr/bin/env bash
# pg_dump / pg_restore of a database with hopper's registry: training runs, checkpoints, models with
# versions and an alias, and the marks of the tables hopper created. The dump is restored into a new
# database with PGOPTIONS='-c hopper.restoring=on' (the documented way: the registry's triggers then
# keep the dumped version numbers); without it the restore stops at the first model
# version, with a hint that says so. Afterwards every registry row equals the original's, a
# registered version scores rows, the next registration gets the next number, a restored model
# output can be warm-started (its mark survived), and a run resumes from restored checkpoints.
# Before the dump another role's trigger tries to forge what protects a registered checkpoint (issue
# 25: a counter rewritten at trigger depth 2 survived the restore); after the restore gc deletes
# exactly the unregistered checkpoint and keeps the registered one.
# Needs PGHOST/PGPORT/PGUSER of a test cluster (test/run-all.sh sets them); exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
SRC=hopper_dump_src
DST=hopper_dump_dst
BAD=hopper_dump_plain
TMP=$(mktemp -d)
MALLORY=hopper_dump_mallory
cleanup() {
  for d in $SRC $DST $BAD; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1 || true; done
  psql -X -q -d postgres -c "DROP ROLE IF EXISTS $MALLORY" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "dump_restore: $*" >&2; exit 1; }
for d in $SRC $DST $BAD; do psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $d" -c "CREATE DATABASE $d"; done

psql -X -q -v ON_ERROR_STOP=1 -d "$SRC" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 200) g;
SELECT hopper.preprocess('pts', 'pk', 'y', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('pk', 'm', '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=10', 2, name => 'dumped run');
SELECT hopper.create_model('dumped-model');
SELECT hopper.register_model_version('dumped-model', uuid) FROM hopper.checkpoints_expanded WHERE run_name = 'dumped run' ORDER BY iteration;
SELECT hopper.set_model_alias('dumped-model', 'champion', 2);
SELECT hopper.delete_model_version('dumped-model', 1);  -- number 1 is never reused, after a restore too
SQL
# Mallory's own table, whose trigger (hopper's guards then run at depth 2) rewrites the registration
# state of the checkpoints: none registered on the one that is, many on the one that is not.
psql -X -q -d "$SRC" >"$TMP/forge.log" 2>&1 <<SQL
SET client_min_messages = warning;
DROP ROLE IF EXISTS $MALLORY;
CREATE ROLE $MALLORY;
GRANT USAGE ON SCHEMA hopper TO $MALLORY;
GRANT USAGE, CREATE ON SCHEMA public TO $MALLORY;
SET ROLE $MALLORY;
CREATE TABLE bait (x int);
CREATE FUNCTION forge() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
    UPDATE hopper.checkpoints c SET version_count = CASE WHEN EXISTS (SELECT 1 FROM hopper.model_versions v
                                                                      WHERE v.checkpoint_id = c.checkpoint_id)
                                                         THEN 0 ELSE 1000000 END;
    RETURN NULL;
END \$\$;
CREATE TRIGGER forge AFTER INSERT ON bait FOR EACH ROW EXECUTE FUNCTION forge();
INSERT INTO bait VALUES (1);
SQL

"$PG_BIN/pg_dump" -Fc -d "$SRC" -f "$TMP/db.dump"
# Without hopper.restoring, the numbering trigger refuses the dumped versions, and says what to do.
if "$PG_BIN/pg_restore" -d "$BAD" "$TMP/db.dump" >"$TMP/plain.log" 2>&1; then fail "a plain restore assigned versions anew"; fi
grep -q "hopper.restoring=on" "$TMP/plain.log" || { cat "$TMP/plain.log" >&2; fail "the failed restore gives no hint"; }
PGOPTIONS='-c hopper.restoring=on' "$PG_BIN/pg_restore" --exit-on-error -d "$DST" "$TMP/db.dump" \
  || fail "the restore with hopper.restoring=on failed"

psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$SRC" -f test/scripts/registry_fingerprint.sql >"$TMP/src"
psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DST" -f test/scripts/registry_fingerprint.sql >"$TMP/dst"
diff -u "$TMP/src" "$TMP/dst" || fail "registry rows differ after the restore"
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DST" "$@"; }
# gc keeping nothing it need not: the unregistered checkpoint (iteration 1) goes, the registered one stays.
actual=$(q -c "SELECT string_agg(iteration::text, ' ') FROM hopper.gc_checkpoints(
                 (SELECT run_id FROM hopper.runs WHERE name = 'dumped run'), keep_best_per_run => 0,
                 keep_latest_per_configuration => 0)")
[ "$actual" = 1 ] || { cat "$TMP/forge.log" >&2; fail "gc after the restore deleted iterations '$actual', expected 1 (forged state restored?)"; }
actual=$(q <<'SQL'
SET client_min_messages = warning;
SELECT string_agg(version::text || ':' || array_to_string(aliases, ','), ' ' ORDER BY version) FROM hopper.model_versions_expanded;
SELECT hopper.materialize_model_version('dumped-model', 'champion_m', alias => 'champion');
SELECT hopper.predict('champion_m', 'pts', 'id', 'x', 'scored');
SELECT count(*) FILTER (WHERE estimated_y IS NOT NULL) FROM scored;
SELECT hopper.register_model_version('dumped-model', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'dumped run'));
SELECT count(*) FROM hopper.output_tables WHERE table_name IN ('m', 'm_info', 'm_summary', 'pk', 'pk_summary');
CALL hopper.fit('pk', 'm', '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=10', 1, warm_start => true);
SELECT hopper.model_state_info(model_state) ->> 'iterations' FROM m;
SQL
)
expected=$(printf '2:champion\n\n\n200\n3\n5\n3')
[ "$actual" = "$expected" ] || { printf "%s\n" "$actual" | cat -A >&2; fail "after the restore expected $(echo $expected) got: $(echo $actual)"; }
run_id=$(q -c "SELECT run_id FROM hopper.runs WHERE name = 'dumped run'")
uuid=$(q -c "SELECT uuid FROM hopper.latest_checkpoints WHERE run_id = $run_id")
q -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit('pk', 'resumed', '{\"input_dim\": 2, \"layers\": [{\"units\": 4, \"activation\": \"relu\"}, {\"units\": 3, \"activation\": \"softmax\"}]}', \$\$optimizer='Adam(lr=0.05)', metrics=['accuracy']\$\$, 'batch_size=10', 1, warm_start_checkpoint => '$uuid')" >/dev/null
[ "$(q -c "SELECT hopper.model_state_info(model_state) ->> 'iterations' FROM resumed")" = 3 ] || fail "the restored checkpoint did not resume"
echo "dump_restore: $(awk -F'|' '{s += $2} END {print s}' "$TMP/dst") registry rows restored unchanged; versions, aliases, marks and checkpoints usable"
