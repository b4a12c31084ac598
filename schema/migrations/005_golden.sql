-- tuna schema, version 5: golden db versions (MITuna's conv_golden, `update_golden`).
-- Re-runnable like 001 (CREATE TABLE IF NOT EXISTS).
--
-- A golden version N is the set of results that ship: per target (arch, num_cu, backend),
-- config, solver and kind (perf: the perf-db row, find: the find-db entry) one result, copied
-- from a tuning session's exportable results (schema/store/golden_store.h) and from a base
-- golden version. `tuna export --golden_v N` writes the files from it. The source session and
-- job are kept for audits and for the kernel db (the job's code objects); deleting the session
-- sets them NULL and keeps the golden row.
CREATE TABLE IF NOT EXISTS golden_result (
  id BIGINT NOT NULL AUTO_INCREMENT,
  golden_v INT NOT NULL,
  arch VARCHAR(64) CHARACTER SET ascii NOT NULL,
  num_cu INT NOT NULL,
  backend ENUM('HIP', 'CUDA', 'CPU') NOT NULL,
  config_id BIGINT NOT NULL,
  solver_id INT NOT NULL,
  kind ENUM('perf', 'find') NOT NULL,
  session_id BIGINT NULL,
  job_id BIGINT NULL,
  params VARCHAR(1024) CHARACTER SET ascii NOT NULL DEFAULT '',
  kernel_time DOUBLE NOT NULL,
  workspace BIGINT NOT NULL DEFAULT 0,
  alg_lib VARCHAR(64) CHARACTER SET ascii NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_golden_result (golden_v, arch, num_cu, backend, config_id, solver_id, kind),
  -- Export: one version's rows of one kind in id order (keyset pages).
  KEY idx_golden_export (golden_v, kind, id),
  KEY idx_golden_config (config_id),
  CONSTRAINT fk_golden_config FOREIGN KEY (config_id) REFERENCES conv_config (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_golden_solver FOREIGN KEY (solver_id) REFERENCES solver (id),
  CONSTRAINT fk_golden_session FOREIGN KEY (session_id) REFERENCES session (id)
    ON DELETE SET NULL,
  CONSTRAINT fk_golden_job FOREIGN KEY (job_id) REFERENCES job (id) ON DELETE SET NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
