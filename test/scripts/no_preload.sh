#!/usr/bin/env bash
# hopper on a server that does not preload it: the extension installs and trains; only parameter
# tables (which need shared memory reserved at server start) refuse, with a hint, and hopper.run_progress
# is empty.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/hopper-nopreload.XXXXXX)
trap 'test/cluster.sh stop "$dir"' EXIT
eval "$(HOPPER_NO_PRELOAD=1 HOPPER_TEST_PORT=$((PGPORT + 7)) test/cluster.sh start "$dir")"
q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
q -d postgres -c "CREATE DATABASE nopreload"
q -d nopreload -c "CREATE EXTENSION hopper"
q -d nopreload <<'SQL'
SET client_min_messages = warning;
CREATE TABLE pts AS SELECT g AS id, ARRAY[g % 2, (g + 1) % 2]::float8[] AS x, (g % 2)::text AS y FROM generate_series(1, 200) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 50, num_segments => 2);
CALL hopper.fit('pts_packed', 'pts_model', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.5)', metrics=['accuracy']$$, 'batch_size=10', 3);
SQL
acc=$(q -d nopreload -c "SELECT training_metrics_final FROM pts_model_info")
[ "$acc" = 1 ] || { echo "no_preload: expected accuracy 1, got $acc" >&2; exit 1; }
# The server's cache of packed buffers needs shared memory reserved at start too: without it each run
# keeps its buffers in an area of its own, and the second run reads TOAST again.
q -d nopreload -c "SET client_min_messages = warning" -c "CALL hopper.fit('pts_packed', 'pts_model2', '{\"input_dim\": 2, \"layers\": [{\"units\": 2, \"activation\": \"softmax\"}]}', \$\$optimizer='SGD(lr=0.5)'\$\$, 'batch_size=10', 3)" >/dev/null
[ "$(q -d nopreload -c "SELECT enabled, size_bytes FROM hopper.shared_buffer_cache_stats()")" = "f|0" ] ||
  { echo "no_preload: the server's buffer cache claims to be there" >&2; exit 1; }
[ "$(q -d nopreload -c "SELECT warm FROM hopper.buffer_cache_stats()")" = 0 ] || { echo "no_preload: a warm run" >&2; exit 1; }
# Where the library is not loaded yet in a session, any role may set a placeholder of
# hopper.restoring; the alias history's triggers (plain PL/pgSQL, which loads no library) take the
# setting from a superuser only, so an owner moving an alias by plain UPDATE is still recorded.
q -d nopreload >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP ROLE IF EXISTS np_owner;
CREATE ROLE np_owner LOGIN;
GRANT USAGE ON SCHEMA hopper TO np_owner;
SQL
q -d nopreload -U np_owner >/dev/null <<'SQL'
SELECT hopper.create_model('np-model');
SELECT hopper.register_model_version('np-model', (SELECT uuid FROM hopper.latest_checkpoints LIMIT 1));
SELECT hopper.register_model_version('np-model', (SELECT uuid FROM hopper.latest_checkpoints LIMIT 1));
SELECT hopper.set_model_alias('np-model', 'champion', 1);
SQL
q -d nopreload -U np_owner >/dev/null <<'SQL'
SET hopper.restoring = on;
UPDATE hopper.model_aliases SET version_id = (SELECT v.version_id FROM hopper.model_versions v JOIN hopper.models m USING (model_id)
                                              WHERE m.name = 'np-model' AND v.version = 2)
WHERE alias = 'champion';
SQL
moves=$(q -d nopreload -c "SELECT string_agg(coalesce(from_version::text, '-') || '>' || to_version, ',' ORDER BY change_id)
                           FROM hopper.model_alias_history WHERE model_name = 'np-model'")
[ "$moves" = "->1,1>2" ] || { echo "no_preload: alias moves recorded: $moves (a role's placeholder of hopper.restoring hid one)" >&2; exit 1; }
# Live progress needs the shared memory reserved at server start: without it the view is empty.
[ "$(q -d nopreload -c "SELECT count(*) FROM hopper.run_progress")" = 0 ] || { echo "no_preload: run_progress not empty" >&2; exit 1; }
if out=$(psql -X -q -d nopreload -c "SELECT hopper.ps_create('t', 10)" 2>&1); then
  echo "no_preload: ps_create succeeded without preloading" >&2
  exit 1
fi
echo "$out" | grep -q "shared_preload_libraries" || { echo "no_preload: unexpected error: $out" >&2; exit 1; }
echo "no_preload: ok"
