# bench/fashion.sh: sourced by the benchmarks that load Fashion-MNIST (bench/setup.sh,
# bench/fit_data_parallel_fashion.sh, bench/packing/run.sh). load_fashion RUN creates the extension
# and the two raw tables (pixels 0-255, class_name as label) through RUN, a psql function of the
# caller's bound to its database, and fills them from $DATA with $BUILD/hopper_load_idx.
load_fashion() {
  local run=$1
  "$run" -c "CREATE EXTENSION hopper" \
    -c "CREATE TABLE fashion_train (id int PRIMARY KEY, label int, class_name text, pixels real[])" \
    -c "CREATE TABLE fashion_test (id int PRIMARY KEY, label int, class_name text, pixels real[])"
  "$BUILD/hopper_load_idx" "$DATA/train-images-idx3-ubyte.gz" "$DATA/train-labels-idx1-ubyte.gz" |
    "$run" -c "COPY fashion_train FROM STDIN (FORMAT binary)"
  "$BUILD/hopper_load_idx" "$DATA/t10k-images-idx3-ubyte.gz" "$DATA/t10k-labels-idx1-ubyte.gz" |
    "$run" -c "COPY fashion_test FROM STDIN (FORMAT binary)"
}
