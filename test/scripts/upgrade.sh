#!/usr/bin/env bash
# Extension upgrades keep users' data: a database made with the previous release (0.1.0, its
# frozen script in sql/releases) gets every registry table filled through that release's API --
# training runs with trials, metrics and checkpoints, an import task with a checkpoint and an
# external reference, models with versions and an alias, a parameter-server save, a run that failed
# half-way -- then ALTER EXTENSION hopper UPDATE. Afterwards:
#   * every row of every registry table is intact (each table's rows hashed before and after), and
#     every checkpoint payload loads, checked against its size and sha256;
#   * what was saved is usable: a registered version scores rows, the failed run resumes from its
#     checkpoints and finishes, the 0.1.0 model output is warm-started (its tables were marked as
#     hopper's by the update), the parameter table is restored;
#   * only tables exactly as hopper's library wrote them are marked as hopper's: users' look-alikes
#     under completed runs' output names (a column type, a comment, a constraint, a column order
#     apart) are not, and warm starts or new runs into their names are refused, their rows kept;
#   * the updated catalog is exactly a fresh install's (functions with their definitions, tables,
#     columns, constraints, indexes, policies, triggers, views, types, comments, grants, the tables
#     pg_dump keeps).
# Needs PGHOST/PGPORT/PGUSER of a test cluster with hopper preloaded and installed (test/run-all.sh);
# exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${HOPPER_UPGRADE_FROM:-0.1.0}
DB=hopper_upgrade
FRESH=hopper_upgrade_fresh
TMP=$(mktemp -d)
cleanup() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP DATABASE IF EXISTS $FRESH" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "upgrade: $*" >&2; exit 1; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" \
  -c "DROP DATABASE IF EXISTS $DB" -c "DROP DATABASE IF EXISTS $FRESH" -c "CREATE DATABASE $DB" -c "CREATE DATABASE $FRESH"
q -c "CREATE EXTENSION hopper VERSION '$OLD'"
[ "$(q -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'hopper'")" = "$OLD" ] || fail "$OLD is not installed"

# ---- the previous release's API fills every table ----
q -v v1_state="$(cat test/data/state-format-1.hex)" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE TABLE pts AS SELECT g AS id, ARRAY[g % 3, g % 5, g % 7]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 300) g;
SELECT hopper.preprocess('pts', 'pk', 'y', 'x', buffer_size => 25, num_segments => 2, scale => 'standardize');
SELECT hopper.preprocess_validation('pts', 'pv', 'y', 'x', 'pk');
SELECT hopper.load_model_arch('archs', '{"input_dim": 3, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
SET hopper.debug_hops = on;  -- multi_hops too: a real _hops is adopted and replaced
CALL hopper.fit_multiple('pk', 'multi', 'configs', 2, 'pv', 1, name => 'old multi');
RESET hopper.debug_hops;
CALL hopper.fit('pk', 'single', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=10', 2, 'pv', name => 'old single');
-- An import task with a stored checkpoint and an external reference.
SELECT hopper.create_task('IMPORT', 'from elsewhere') AS task \gset
SELECT hopper.create_checkpoint((SELECT model_state FROM single), :task, metadata => '{"note": "imported"}');
SELECT hopper.create_checkpoint_reference('s3://bucket/model.pt', 'torch', 1234, 'md5:abc', :task);
-- A state written by the 0.1.0 library itself (format version 1), kept as a checkpoint.
SELECT hopper.create_checkpoint(decode(:'v1_state', 'hex'), :task, metadata => '{"note": "format 1"}');
-- Models, versions, aliases.
SELECT hopper.create_model('old-model', 'made with 0.1.0', labels => ARRAY['legacy']);
SELECT hopper.register_model_version('old-model', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'old single'));
SELECT hopper.register_model_version('old-model', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'old multi' AND mst_key = 1));
SELECT hopper.set_model_alias('old-model', 'champion', 1);
-- A parameter table saved to the registry.
SELECT hopper.ps_create('old_ps', 6, consistency => 'asp', init_value => 0.5);
SELECT hopper.ps_add('old_ps', 0, ARRAY[0, 5]::bigint[], ARRAY[1.5, -2]::real[]);
SELECT hopper.ps_save('old_ps') AS ps_uuid \gset
SELECT hopper.ps_drop('old_ps');
SQL
# Users' tables that look like hopper's, under the names of completed runs' outputs (each run's real
# tables replaced by the user's): the update must adopt none of them, whatever columns they share.
LA_ARCH='{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}'
LA_COMPILE="optimizer='Adam(lr=0.05)', metrics=['accuracy']"
q -v arch="$LA_ARCH" -v compile="$LA_COMPILE" >/dev/null <<'SQL'
SET client_min_messages = warning;
CALL hopper.fit('pk', 'la_type', :'arch', :'compile', 'batch_size=10', 1);
CALL hopper.fit('pk', 'la_comment', :'arch', :'compile', 'batch_size=10', 1);
CALL hopper.fit('pk', 'la_info', :'arch', :'compile', 'batch_size=10', 1);
SET hopper.debug_hops = on;
CALL hopper.fit('pk', 'la_hops', :'arch', :'compile', 'batch_size=10', 1);
RESET hopper.debug_hops;
CALL hopper.fit('pk', 'la_order', :'arch', :'compile', 'batch_size=10', 1);
CALL hopper.fit('pk', 'old_lib', :'arch', :'compile', 'batch_size=10', 1);
-- the model output differs by one column's type (json, not jsonb)
DROP TABLE la_type;
CREATE TABLE la_type (mst_key int PRIMARY KEY, model_id int, model_state bytea NOT NULL, model_arch jsonb NOT NULL,
                      compile_params text NOT NULL, fit_params text NOT NULL, model_config json NOT NULL);
ALTER TABLE la_type ALTER COLUMN model_state SET STORAGE EXTERNAL;
INSERT INTO la_type SELECT mst_key, model_id, model_state, model_arch, compile_params, fit_params, model_config FROM single;
-- the model output is exactly hopper's but for the comment its owner wrote
COMMENT ON TABLE la_comment IS 'my model, keep it';
-- the _info differs by a constraint only (no primary key)
CREATE TABLE la_info_user (LIKE la_info_info);
INSERT INTO la_info_user SELECT * FROM la_info_info;
DROP TABLE la_info_info;
ALTER TABLE la_info_user RENAME TO la_info_info;
-- a _hops with hopper's column names, one of another type (seconds numeric)
DROP TABLE la_hops_hops;
CREATE TABLE la_hops_hops (iteration int, hop int, statement text, mst_key int, dist_key int, seconds numeric);
INSERT INTO la_hops_hops VALUES (1, 1, 'my own row', 1, 0, 0.5);
-- the _summary has hopper's columns in another order
CREATE TABLE la_order_user AS SELECT * FROM la_order_summary;
ALTER TABLE la_order_user DROP COLUMN description;
ALTER TABLE la_order_user ADD COLUMN description text;
DROP TABLE la_order_summary;
CREATE TABLE la_order_summary AS SELECT * FROM la_order_user;
DROP TABLE la_order_user;
-- (adopted) a _summary as 0.1.0's library wrote it: without the training_metrics and feature_recipe
-- columns of 0.2.0's
ALTER TABLE old_lib_summary DROP COLUMN training_metrics, DROP COLUMN feature_recipe;
CREATE TABLE old_lib_user AS SELECT * FROM old_lib_summary;
DROP TABLE old_lib_summary;
ALTER TABLE old_lib_user RENAME TO old_lib_summary;
SQL
la_tables="la_type la_type_info la_type_summary la_comment la_comment_info la_comment_summary la_info_info la_hops_hops la_order la_order_info la_order_summary"
la_counts() { for t in $la_tables; do printf '%s:%s ' "$t" "$(q -A -t -c "SELECT count(*) FROM $t")"; done; }
la_before=$(la_counts)

# A run that fails in its second iteration (its validation data turned bad): the first committed.
q -c "UPDATE pv SET independent_var[1][1] = 'NaN' WHERE buffer_id = 0" >/dev/null
if q -c "SET client_min_messages = warning" \
     -c "CALL hopper.fit_multiple('pk', 'broken', 'configs', 3, 'pv', 2, name => 'old broken')" >"$TMP/broken.log" 2>&1; then
  fail "the run meant to fail succeeded"
fi
q -c "UPDATE pv SET independent_var[1][1] = 0 WHERE buffer_id = 0" >/dev/null

# Every row of every registry table, hashed per table (the runs' stored rows under either name).
fingerprint() { q -A -t -f test/scripts/registry_fingerprint.sql; }
fingerprint >"$TMP/before"
grep -q "^tasks|[1-9]" "$TMP/before" && grep -q "^model_aliases|1|" "$TMP/before" && grep -q "^checkpoint_chunks|[1-9]" "$TMP/before" \
  || { cat "$TMP/before" >&2; fail "the old release did not fill the tables"; }
while IFS='|' read -r t n _; do [ "$n" -gt 0 ] || fail "table $t is empty before the update"; done <"$TMP/before"

# ---- the update ----
q -c "ALTER EXTENSION hopper UPDATE"
NEW=$(q -A -t -c "SELECT default_version FROM pg_available_extensions WHERE name = 'hopper'")
[ "$(q -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'hopper'")" = "$NEW" ] || fail "not at $NEW after the update"

# ---- adopted: exactly the tables hopper wrote, none of the look-alikes ----
actual=$(q -A -t -c "SELECT string_agg(table_name || ':' || kind, ' ' ORDER BY table_name) FROM hopper.output_tables")
expected="la_hops:model la_hops_info:model_info la_hops_summary:model_summary la_info:model la_info_summary:model_summary"
expected+=" multi:model multi_hops:model_hops multi_info:model_info multi_summary:model_summary"
expected+=" old_lib:model old_lib_info:model_info old_lib_summary:model_summary"
expected+=" single:model single_info:model_info single_summary:model_summary"
[ "$actual" = "$expected" ] || fail "the update adopted: $actual; expected: $expected"
[ "$(q -A -t -c "SELECT obj_description('la_comment'::regclass, 'pg_class')")" = "my model, keep it" ] || fail "a user's comment was changed"
# ---- every row intact, every payload whole ----
fingerprint >"$TMP/after"
diff -u "$TMP/before" "$TMP/after" || fail "registry rows changed in the update"
actual=$(q -A -t -c "SELECT count(*) FILTER (WHERE length(hopper.checkpoint_state(uuid)) > 0) || '/' || count(*)
                     FROM hopper.checkpoints WHERE storage = 'database' AND state = 'COMPLETED'")
[ "${actual%/*}" = "${actual#*/}" ] || fail "checkpoint payloads that no longer load: $actual"

# ---- usable ----
actual=$(q -A -t <<'SQL'
SET client_min_messages = warning;
-- the failed run reads INTERRUPTED; its stored row still says ACTIVE
SELECT state || '/' || (SELECT state FROM hopper.run_records r WHERE r.run_id = v.run_id) FROM hopper.runs v WHERE name = 'old broken';
-- a registered version (a 0.1.0 state) scores rows
SELECT hopper.materialize_model_version('old-model', 'champion_m', alias => 'champion');
SELECT hopper.predict('champion_m', 'pts', 'id', 'x', 'scored');
SELECT count(*) FILTER (WHERE estimated_y IS NOT NULL) FROM scored;
SELECT hopper.model_state_info(hopper.checkpoint_state(uuid)) ->> 'format_version' FROM hopper.checkpoints
WHERE metadata ->> 'note' = 'format 1';
SQL
)
[ "$actual" = "$(printf 'INTERRUPTED/ACTIVE\n\n\n300\n1')" ] || fail "expected INTERRUPTED/ACTIVE, 300 rows scored, a version-1 state; got: $actual"
broken_run=$(q -A -t -c "SELECT run_id FROM hopper.runs WHERE name = 'old broken'")
q >/dev/null <<SQL
SET client_min_messages = warning;
-- the interrupted run resumes from its checkpoints, and the 0.1.0 output is warm-started
CALL hopper.fit_multiple('pk', 'resumed', 'configs', 2, 'pv', 1, warm_start_run => $broken_run);
CALL hopper.fit_multiple('pk', 'multi', 'configs', 1, 'pv', 1, warm_start => true);
SELECT hopper.ps_restore('$(q -A -t -c "SELECT uuid FROM hopper.checkpoints WHERE format = 'hopper_ps_v1'")', 'old_ps_back');
SQL
actual=$(q -A -t <<'SQL'
SELECT count(*) FROM resumed;
SELECT min(steps) > 0 FROM multi_info;
SELECT kind FROM hopper.output_tables WHERE table_name = 'multi_summary';
SELECT hopper.ps_get('old_ps_back', 0, ARRAY[0, 5]::bigint[])::text;
SELECT hopper.ps_drop('old_ps_back');
SQL
)
[ "$actual" = "$(printf '2\nt\nmodel_summary\n{2,-1.5}\nt')" ] || fail "unexpected results after the update: $actual"

# A warm start into the look-alikes' names is refused, their rows kept; so is a fresh run into them.
for out in la_type la_comment la_info la_hops la_order; do
  if q -v arch="$LA_ARCH" -v compile="$LA_COMPILE" -v out="$out" >"$TMP/la.log" 2>&1 <<'SQL'
SET client_min_messages = warning;
CALL hopper.fit('pk', :'out', :'arch', :'compile', 'batch_size=10', 1, warm_start => true);
SQL
  then
    fail "a warm start into $out replaced a user's table"
  fi
  grep -Eq "was not created by hopper|already exists and hopper did not create it" "$TMP/la.log" \
    || { cat "$TMP/la.log" >&2; fail "a warm start into $out failed for another reason"; }
done
if q -v arch="$LA_ARCH" -v compile="$LA_COMPILE" >"$TMP/la.log" 2>&1 <<'SQL'
CALL hopper.fit('pk', 'la_hops', :'arch', :'compile', 'batch_size=10', 1);
SQL
then fail "a new run into la_hops replaced its tables"; fi
grep -q "already exists" "$TMP/la.log" || { cat "$TMP/la.log" >&2; fail "a new run into la_hops failed for another reason"; }
[ "$(la_counts)" = "$la_before" ] || fail "users' look-alike tables changed: $(la_counts), were $la_before"

# ---- the updated catalog is a fresh install's ----
psql -X -q -v ON_ERROR_STOP=1 -d "$FRESH" -c "CREATE EXTENSION hopper"
catalog() {
  psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" <<'SQL'
SELECT o FROM (
  SELECT 'function ' || p.oid::regprocedure::text || ' ' ||
         CASE WHEN p.prokind = 'a' THEN (SELECT concat_ws(' ', a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
                                                          a.aggdeserialfn, a.aggtranstype::regtype)
                                         FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
              ELSE md5(pg_get_functiondef(p.oid)) END ||
         ' ' || coalesce(md5(obj_description(p.oid, 'pg_proc')), '-') || ' ' || coalesce(p.proacl::text, '-') AS o
  FROM pg_proc p WHERE p.pronamespace = 'hopper'::regnamespace
  UNION ALL
  SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.reloptions::text, '-') || ' ' || c.relrowsecurity ||
         ' ' || coalesce(c.relacl::text, '-') || ' ' || coalesce(md5(obj_description(c.oid, 'pg_class')), '-')
  FROM pg_class c WHERE c.relnamespace = 'hopper'::regnamespace
  UNION ALL
  -- a column's place among the live ones (a dropped column leaves a gap in attnum)
  SELECT 'column ' || c.relname || '.' || a.attname || ' ' ||
         (SELECT count(*) FROM pg_attribute b WHERE b.attrelid = a.attrelid AND b.attnum BETWEEN 1 AND a.attnum
                                                AND NOT b.attisdropped) || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
         a.attnotnull || ' ' || a.attstorage::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-') || ' ' || a.attidentity::text ||
         -- column grants: PUBLIC inserts into every column but the identity ones (registry ids)
         ' ' || coalesce(a.attacl::text, '-')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE c.relnamespace = 'hopper'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'constraint ' || c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
  FROM pg_constraint c WHERE c.connamespace = 'hopper'::regnamespace
  UNION ALL
  SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE c.relnamespace = 'hopper'::regnamespace
  UNION ALL
  SELECT 'policy ' || tablename || ' ' || policyname || ' ' || cmd || ' ' || roles::text || ' ' || coalesce(qual, '-') || ' ' ||
         coalesce(with_check, '-') FROM pg_policies WHERE schemaname = 'hopper'
  UNION ALL
  SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  WHERE c.relnamespace = 'hopper'::regnamespace AND NOT t.tgisinternal
  UNION ALL
  SELECT 'view ' || c.relname || ' ' || md5(pg_get_viewdef(c.oid)) FROM pg_class c
  WHERE c.relnamespace = 'hopper'::regnamespace AND c.relkind = 'v'
  UNION ALL
  SELECT 'type ' || t.typname || ' ' || t.typtype::text || ' ' || coalesce(md5(obj_description(t.oid, 'pg_type')), '-') FROM pg_type t
  WHERE t.typnamespace = 'hopper'::regnamespace AND t.typtype <> 'b' AND t.typrelid = 0
  UNION ALL
  SELECT 'pg_dump keeps ' || c::regclass::text FROM pg_extension e, unnest(e.extconfig) c WHERE e.extname = 'hopper'
  UNION ALL
  SELECT 'schema comment ' || md5(obj_description('hopper'::regnamespace, 'pg_namespace'))
) o ORDER BY o;
SQL
}
catalog "$DB" >"$TMP/catalog.updated"
catalog "$FRESH" >"$TMP/catalog.fresh"
[ "$(wc -l <"$TMP/catalog.fresh")" -gt 300 ] || fail "the catalog listing is too short to mean anything"
diff -u "$TMP/catalog.fresh" "$TMP/catalog.updated" || fail "the updated catalog differs from a fresh install of $NEW"
echo "upgrade: $OLD -> $NEW keeps every registry row ($(awk -F'|' '{s += $2} END {print s}' "$TMP/after") rows in 10 tables), every payload loads, and the catalog equals a fresh install ($(wc -l <"$TMP/catalog.fresh") objects)"
