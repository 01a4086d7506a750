#!/usr/bin/env bash
# A training run's statements build no index with parallel workers. They set
# min_parallel_table_scan_size = 0 so that the training query over a few large packed rows gets its
# workers (src/pg/runtime/scoped_settings.cpp); PostgreSQL then also planned parallel builds for the
# TOAST index of every table an iteration creates (a table without statistics is estimated at 10
# pages) and waited for max_parallel_maintenance_workers workers to start each time: about 40 ms an
# iteration on a busy 2-core machine, 3.8 s of a 0.9 s fit of 60 iterations on 281 rows
# (bench/README.md, "Tables as they are"). PostgreSQL says at DEBUG1 how it builds each index.
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT).
set -euo pipefail
DB=hopper_serial_index_builds
fail() { echo "serial_index_builds.sh: FAILED: $*" >&2; exit 1; }
psql -qX -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
log=$(psql -qX -v ON_ERROR_STOP=1 -d "$DB" 2>&1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS SELECT g AS id, (g % 3)::float8 AS a, (g % 5)::text AS b, (g % 2)::text AS y
FROM generate_series(1, 200) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'a, b', num_segments => 2, buffer_size => 50);
SELECT hopper.load_model_arch('archs', '{"input_dim": 7, "layers": [{"units": 4, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.01)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
SET client_min_messages = debug1;
CALL hopper.fit('pts_packed', 'one', '{"input_dim": 7, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 2);
CALL hopper.fit_multiple('pts_packed', 'many', 'configs', 2);
SQL
) || fail "$log"
serial=$(grep -c 'building index .* serially' <<<"$log" || true)
parallel=$(grep 'building index .* with request for' <<<"$log" || true)
# The run creates tables with TOAST tables every iteration: their index builds must show up.
[ "$serial" -gt 0 ] || fail "no index build reported at DEBUG1:
$log"
[ -z "$parallel" ] || fail "index builds with parallel workers inside training runs:
$parallel"
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "serial_index_builds.sh: ok ($serial serial index builds)"
