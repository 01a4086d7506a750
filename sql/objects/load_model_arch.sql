CREATE OR REPLACE FUNCTION hopper.load_model_arch(
    model_arch_table text,
    model_arch jsonb,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    model_weights bytea DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'load_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_arch(text, jsonb, text, text, bytea) IS
'adds an architecture (hopper''s native JSON or a Keras Sequential model''s to_json()) to model_arch_table, creating the table if missing, and returns its model_id; model_weights (a hopper model state with the same layers, e.g. a model_state of a model output table, or Keras'' flat float32 weights in get_weights() order, stored as a model state) are the starting weights of transfer learning';
