CREATE OR REPLACE FUNCTION hopper.register_model_version(model_name text, checkpoint uuid, name text DEFAULT NULL,
                                              comment text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                              labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'register_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.register_model_version(text, uuid, text, text, jsonb, text[], text) IS
'registers a COMPLETED checkpoint as the next version of a model and returns the version number; concurrent registrations get consecutive numbers, an archived model refuses, and the checkpoint cannot be deleted while the version exists';
