CREATE OR REPLACE FUNCTION hopper.learning_curves_svg(run_id bigint, metric text DEFAULT NULL, split text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'learning_curves_svg' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.learning_curves_svg(bigint, text, text) IS
'an SVG line chart of a training run''s learning curves: the metric (default: the run''s searcher metric) on the split (default: validation when recorded, else training) per evaluated iteration, one line per configuration (a dot where it has one point), the one with the best last value highlighted, the legend naming the settings that tell the configurations apart (mst_key 3: lr=0.001, optimizer=adam); psql -At -c "SELECT hopper.learning_curves_svg(7)" > curves.svg';
