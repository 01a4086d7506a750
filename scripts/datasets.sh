#!/usr/bin/env bash
# Public tabular data sets from the packages that ship them, as files, for the real-data test
# (test/scripts/tabular_penguins.sh) and benchmark (bench/tabular/run.sh). Nothing is vendored.
#
#   bash scripts/datasets.sh vega            # npm's vega-datasets (penguins.json, flights-*.json, ...)
#   bash scripts/datasets.sh r               # R's ggplot2 diamonds and modeldata credit_data as CSV
#                                            # (Debian: r-base-core, r-cran-ggplot2, r-cran-modeldata)
#   bash scripts/datasets.sh load penguins   # fetch if needed, then load into a table of that name
#                                            # (psql with the PG* environment; penguins, diamonds,
#                                            # credit_data, flights)
# Prints the directory holding the files: ${HOPPER_DATA_DIR:-$HOME/.cache/hopper-datasets}. Idempotent:
# a file already there is not fetched again. vega-datasets' version is pinned so results repeat.
#
# A loaded table is the data set as it is -- text categories as text, NULLs kept, R's ordered factors
# as their labels -- plus id (the row's number in the file) and is_test, a split every tool uses:
# about one row in five, chosen by a hash of the id (hashint4, the same on every platform).
set -euo pipefail
DIR=${HOPPER_DATA_DIR:-$HOME/.cache/hopper-datasets}
VEGA_VERSION=3.2.1
VEGA=$DIR/vega-datasets-$VEGA_VERSION
mkdir -p "$DIR"

psql_run() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$@"; }
split='(pg_catalog.abs(pg_catalog.hashint4(id::int)) % 5 = 0)'
load() {
  case "$1" in
    penguins)
      bash "$0" vega >/dev/null
      # JSON objects with spaces in their keys, NULLs for unmeasured birds, '.' for one sex.
      psql_run <<SQL
\\set doc \`cat '$VEGA/penguins.json'\`
DROP TABLE IF EXISTS penguins;
CREATE TABLE penguins AS
SELECT e.id::int AS id, e.v ->> 'Species' AS species, e.v ->> 'Island' AS island,
       (e.v ->> 'Beak Length (mm)')::float8 AS beak_length_mm, (e.v ->> 'Beak Depth (mm)')::float8 AS beak_depth_mm,
       (e.v ->> 'Flipper Length (mm)')::int AS flipper_length_mm, (e.v ->> 'Body Mass (g)')::int AS body_mass_g,
       e.v ->> 'Sex' AS sex
FROM pg_catalog.jsonb_array_elements(:'doc'::jsonb) WITH ORDINALITY AS e(v, id);
ALTER TABLE penguins ADD COLUMN is_test boolean;
UPDATE penguins SET is_test = $split;
SQL
      ;;
    flights)
      bash "$0" vega >/dev/null
      # 20,000 flights of 2001: when, where from and to (airport codes as text), how far, the delay in minutes.
      psql_run <<SQL
\\set doc \`cat '$VEGA/flights-20k.json'\`
DROP TABLE IF EXISTS flights;
CREATE TABLE flights AS
SELECT e.id::int AS id, pg_catalog.to_timestamp(e.v ->> 'date', 'YYYY/MM/DD HH24:MI')::timestamp AS departure,
       (e.v ->> 'distance')::int AS distance, e.v ->> 'origin' AS origin, e.v ->> 'destination' AS destination,
       (e.v ->> 'delay')::int AS delay
FROM pg_catalog.jsonb_array_elements(:'doc'::jsonb) WITH ORDINALITY AS e(v, id);
ALTER TABLE flights ADD COLUMN is_test boolean;
UPDATE flights SET is_test = $split;
SQL
      ;;
    diamonds|credit_data)
      bash "$0" r >/dev/null
      local columns
      if [ "$1" = diamonds ]; then
        columns='carat float8, cut text, color text, clarity text, depth float8, "table" float8, price int, x float8, y float8, z float8'
      else
        columns='status text, seniority int, home text, "time" int, age int, marital text, records text, job text,
                 expenses int, income int, assets int, debt int, amount int, price int'
      fi
      psql_run -c "DROP TABLE IF EXISTS $1" -c "CREATE TABLE $1 ($columns)"
      psql_run -c "COPY $1 FROM STDIN (FORMAT csv, HEADER true)" <"$DIR/r/$1.csv"
      psql_run -c "ALTER TABLE $1 ADD COLUMN id serial, ADD COLUMN is_test boolean" -c "UPDATE $1 SET is_test = $split"
      ;;
    *) echo "scripts/datasets.sh: unknown table '$1' (penguins, flights, diamonds, credit_data)" >&2; exit 2 ;;
  esac
}

if [ "${1:-}" = load ]; then
  shift
  for t in "$@"; do load "$t"; done
  exit 0
fi
for what in "$@"; do
  case "$what" in
    vega)
      if [ ! -f "$DIR/vega-datasets-$VEGA_VERSION/penguins.json" ]; then
        command -v npm >/dev/null || { echo "scripts/datasets.sh: npm is not installed" >&2; exit 1; }
        tmp=$(mktemp -d)
        (cd "$tmp" && npm pack --silent "vega-datasets@$VEGA_VERSION" >/dev/null)
        mkdir -p "$DIR/vega-datasets-$VEGA_VERSION"
        # Only the tabular files the project reads (the package is 17 MB packed, mostly maps and images).
        tar -xzf "$tmp/vega-datasets-$VEGA_VERSION.tgz" -C "$tmp" package/data/penguins.json \
          package/data/flights-20k.json package/data/seattle-weather.csv package/data/cars.json
        mv "$tmp"/package/data/* "$DIR/vega-datasets-$VEGA_VERSION/"
        rm -rf "$tmp"
      fi
      ;;
    r)
      if [ ! -f "$DIR/r/credit_data.csv" ]; then
        command -v Rscript >/dev/null || { echo "scripts/datasets.sh: Rscript is not installed (r-base-core)" >&2; exit 1; }
        mkdir -p "$DIR/r"
        # NA becomes an empty unquoted field: COPY ... (FORMAT csv) reads it as NULL; text stays quoted.
        Rscript -e "write.csv(ggplot2::diamonds, '$DIR/r/diamonds.csv', row.names = FALSE, na = '')" \
                -e "data(credit_data, package = 'modeldata'); write.csv(credit_data, '$DIR/r/credit_data.csv.tmp', row.names = FALSE, na = '')"
        mv "$DIR/r/credit_data.csv.tmp" "$DIR/r/credit_data.csv"
      fi
      ;;
    *) echo "scripts/datasets.sh: unknown set '$what' (vega, r)" >&2; exit 2 ;;
  esac
done
echo "$DIR"
