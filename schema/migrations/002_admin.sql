-- tuna schema, version 2: what the admin workflow (import, import-db, status) needs on top of 001.
-- Re-runnable like 001 (MariaDB's ADD COLUMN IF NOT EXISTS; MODIFY is idempotent).

-- Tags are stored and compared verbatim: with the table's utf8mb4_unicode_ci, 'ResNet' and
-- 'resnet', or 'café' and 'cafe', would be the same tag and one import would silently merge into
-- another's. Binary collation makes the unique key (config_id, tag) byte-exact.
ALTER TABLE config_tag
  MODIFY tag VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

-- The find db's third field (e.g. miopenConvolutionFwdAlgoWinograd) as read by `tuna import-db`.
-- NULL for results tuna measured itself: there it follows from the solver's algorithm family and
-- the direction. Solvers unknown to the registry (imported from MIOpen's files) have no family,
-- so their algorithm must be kept to export the entry again.
ALTER TABLE find_result
  ADD COLUMN IF NOT EXISTS alg_lib VARCHAR(64) CHARACTER SET ascii NULL AFTER params;

-- `tuna status`: jobs by state of one session, and jobs finished recently (rate, ETA).
CREATE INDEX IF NOT EXISTS idx_job_session_state ON job (session_id, state, finished_at);
