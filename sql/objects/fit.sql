CREATE OR REPLACE PROCEDURE hopper.fit(
    packed_table text,
    model_output_table text,
    model_arch jsonb,
    compile_params text DEFAULT NULL,
    fit_params text DEFAULT NULL,
    num_iterations integer DEFAULT 10,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT 1,
    warm_start boolean DEFAULT false,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    checkpoint_frequency integer DEFAULT NULL,
    warm_start_checkpoint uuid DEFAULT NULL,
    searcher_metric text DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit(text, text, jsonb, text, text, integer, text, integer, boolean, text, text, integer, uuid, text) IS
'trains one model on a packed table, visiting its segments in turn (one iteration = one epoch; 10 unless num_iterations says otherwise); compile_params left out: optimizer=''Adam(lr=0.001)'' (with accuracy for a softmax or sigmoid output), the loss following the output layer; fit_params left out: batch_size=32; writes model_output_table, _info and _summary; commits after each iteration when called outside a transaction block; records the run in hopper.runs and writes a checkpoint every checkpoint_frequency iterations (default: when metrics are computed) and after the last; warm_start_checkpoint starts from a checkpoint';
