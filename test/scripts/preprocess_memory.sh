#!/usr/bin/env bash
# preprocess's memory estimate (the figure hopper.max_memory_mb is checked against) is within 25% of
# what the backend really takes, on shapes that stress each part of it: many classes (wide one-hot
# rows), wide features stored out of line, many narrow rows (the row identifiers and their order),
# small and large buffers. For each shape, in a fresh backend:
#   * the estimate: the message of the 53200 error preprocess raises under hopper.max_memory_mb = 1
#     ("... would need about 245 MB of memory");
#   * the truth: the backend's peak resident memory (VmHWM of /proc/<pid>/status) during a real
#     preprocess, minus its resident memory before, minus what it mapped of shared memory and files
#     meanwhile (shared buffers it touched are resident too, but are not its own).
# A cluster of its own with 16 MB of shared buffers keeps that shared part small next to the peaks
# (50-300 MB), and no server buffer cache (hopper.shared_buffer_cache_mb = 0): preprocess would map the
# buffers it keeps there after its peak, and subtracting that shared memory from the peak would make
# the truth look smaller than it was. Exits non-zero if any shape is off by more than
# PREPROCESS_MEMORY_TOLERANCE (0.25).
# The backend packs alone (max_parallel_workers_per_gather 0): with parallel workers reading rows
# the plan adds theirs, which the backend's peak does not show.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOL=${PREPROCESS_MEMORY_TOLERANCE:-0.25}
dir=$(mktemp -d /tmp/hopper-prepmem.XXXXXX)
trap 'test/cluster.sh stop "$dir"' EXIT
eval "$(HOPPER_TEST_SHARED_BUFFERS=16MB HOPPER_TEST_PORT=$((${PGPORT:-54329} + 11)) \
  HOPPER_EXTRA_CONF="hopper.shared_buffer_cache_mb = 0" test/cluster.sh start "$dir")"
q() { PGOPTIONS="-c max_parallel_workers_per_gather=0" psql -X -q -v ON_ERROR_STOP=1 -At -d prepmem "$@"; }
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE prepmem"
q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- Memory of this backend, in kB: VmHWM (peak resident), VmRSS (resident now), RssShmem, RssFile.
CREATE FUNCTION mem(field text) RETURNS bigint LANGUAGE sql AS
$$ SELECT (regexp_match(pg_read_file('/proc/self/status'), field || ':\s+(\d+)'))[1]::bigint $$;
-- many classes: 12,000 rows of 10 features and 3,000 classes
CREATE TABLE many_classes AS
SELECT g AS id, ARRAY(SELECT (g * k) % 97 FROM generate_series(1, 10) k)::float8[] AS x, 'class ' || (g % 3000) AS y
FROM generate_series(1, 12000) g;
-- wide features: 6,000 rows of 2,000 float8 features (16 kB, stored out of line), 2 classes
CREATE TABLE wide AS
SELECT g AS id, ARRAY(SELECT random() FROM generate_series(1, 2000) k WHERE g > 0)::float8[] AS x, g % 2 = 0 AS y
FROM generate_series(1, 6000) g;
-- narrow rows: 2,000,000 rows of 3 feature columns, 2 classes
CREATE TABLE narrow AS
SELECT g AS id, (g % 7)::float8 AS a, (g % 11)::int AS b, (g % 13)::real AS c, g % 2 AS y FROM generate_series(1, 2000000) g;
VACUUM ANALYZE many_classes, wide, narrow;
SQL

fails=0
check() {  # name, preprocess arguments
  local name=$1 args=$2 est_text est_kb out hwm rss0 shm0 shm1 file0 file1 used_kb
  # The estimate, from the refusal under a 1 MB budget.
  est_text=$(q -c "SET hopper.max_memory_mb = 1" -c "SELECT hopper.preprocess($args)" 2>&1 | grep -o 'would need about [0-9.]* [kMG]B' || true)
  [ -n "$est_text" ] || { echo "preprocess_memory: $name: no estimate in the error" >&2; fails=1; return; }
  est_kb=$(echo "$est_text" | awk '{v = $4; u = $5; print int(v * (u == "GB" ? 1048576 : u == "MB" ? 1024 : 1))}')
  # The truth, in a fresh backend.
  out=$(q <<SQL
SET client_min_messages = warning;
SELECT mem('VmRSS'), mem('RssShmem'), mem('RssFile');
SELECT hopper.preprocess($args);
SELECT mem('VmHWM'), mem('RssShmem'), mem('RssFile');
SQL
)
  read -r rss0 shm0 file0 <<<"$(echo "$out" | sed -n 1p | tr '|' ' ')"
  read -r hwm shm1 file1 <<<"$(echo "$out" | tail -1 | tr '|' ' ')"
  used_kb=$((hwm - rss0 - (shm1 - shm0) - (file1 - file0)))
  awk -v n="$name" -v e="$est_kb" -v u="$used_kb" -v t="$TOL" 'BEGIN {
        r = e / u;
        printf "preprocess_memory: %-28s estimate %7.1f MB, peak %7.1f MB, ratio %.2f\n", n, e / 1024, u / 1024, r;
        exit (r < 1 - t || r > 1 + t) ? 1 : 0 }' || fails=1
  q -c "DROP TABLE IF EXISTS out_packed, out_packed_summary"
}
check "many classes, buffer 3000" "'many_classes', 'out_packed', 'y', 'x', buffer_size => 3000, num_segments => 1"
check "many classes, buffer 500" "'many_classes', 'out_packed', 'y', 'x', buffer_size => 500, num_segments => 1"
check "wide features, buffer 3000" "'wide', 'out_packed', 'y', 'x', buffer_size => 3000, num_segments => 2"
check "narrow rows, buffer 200000" "'narrow', 'out_packed', 'y', 'a, b, c', buffer_size => 200000, num_segments => 2"
[ "$fails" = 0 ] || { echo "preprocess_memory: an estimate is off by more than $TOL" >&2; exit 1; }
echo "preprocess_memory: ok"
