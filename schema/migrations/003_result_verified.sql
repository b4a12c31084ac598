-- tuna schema, version 3: which results may be exported.
-- A result row is written by an eval step; `verified` says that the timed kernel's output was
-- checked against the reference implementation and matched (DESIGN §1 step 7). The exporter
-- writes only verified rows, so a result whose check failed or was skipped (e.g. a timing-only
-- re-run) stays in the database for audits but never reaches a perf db or find db.
-- Existing rows become unverified (FALSE): nothing unchecked is exported by accident.
-- Re-runnable: ADD COLUMN / INDEX IF NOT EXISTS (MariaDB).

ALTER TABLE perf_result
  ADD COLUMN IF NOT EXISTS verified BOOLEAN NOT NULL DEFAULT FALSE AFTER candidates_tried;

ALTER TABLE find_result
  ADD COLUMN IF NOT EXISTS verified BOOLEAN NOT NULL DEFAULT FALSE AFTER params;

-- The exporter reads a session's verified results in id order (keyset pages).
CREATE INDEX IF NOT EXISTS idx_perf_result_export ON perf_result (session_id, verified, id);
CREATE INDEX IF NOT EXISTS idx_find_result_export ON find_result (session_id, verified, id);
