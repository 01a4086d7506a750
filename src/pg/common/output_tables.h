// Tables hopper created, and the proof it needs before it drops or replaces one (hopper.output_tables,
// sql/ext/40_registry.sql): the table's comment carries "[hopper:<token>]" and the catalog has a row
// with that token and the table's kind. hopper never drops a table by name alone.
#pragma once

#include <optional>
#include <string>

#include "pg/common/names.h"
#include "pg/common/spi.h"

namespace hopper::pg {

// A fresh token for a set of tables written together (a model output and its _info, _summary, _hops).
std::string new_output_token(Spi& spi);

// Records a table hopper just created (same transaction): a row in hopper.output_tables and the
// token in the table's comment, after `description` ("hopper model output of training run 12").
void record_output_table(Spi& spi, const TableName& table, const std::string& kind, const std::string& token,
                         const std::string& description, std::optional<int64_t> run_id = std::nullopt);

// The token of `table` if hopper created it as `kind` (and the table exists), else nothing.
std::optional<std::string> output_token(Spi& spi, const TableName& table, const std::string& kind);

// After the tables of a token were dropped: their rows go from hopper.output_tables.
void forget_output_tables(Spi& spi, const std::string& token);

// Before replacing `table`: nothing if it does not exist; fine if hopper created it as `kind` with
// `token` (any token when empty) and the caller may drop it (42501 if not); otherwise 42P07, naming
// what it is (`what`).
void require_replaceable(Spi& spi, const TableName& table, const std::string& kind, const std::string& token,
                         const char* what);
// 42501 if `table` exists and the caller may not drop it (does not own it).
void require_droppable(const TableName& table, const char* what);
// 55006 if other objects (views, foreign keys: anyone's) depend on `table`, which would be replaced:
// its DROP would fail, after the training a warm start does first.
void require_no_dependents(Spi& spi, const TableName& table, const char* what);

}  // namespace hopper::pg
