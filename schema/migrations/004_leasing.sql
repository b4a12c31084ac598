-- tuna schema, version 4: what distributed execution (coordinator/worker leasing) needs.
-- Re-runnable like 001 (ADD COLUMN / INDEX / TABLE IF NOT EXISTS).

-- Which worker did each step: audits, and the test that compile and eval ran on different hosts.
ALTER TABLE job
  ADD COLUMN IF NOT EXISTS compile_worker VARCHAR(191) NULL AFTER lease_expires_at,
  ADD COLUMN IF NOT EXISTS eval_worker VARCHAR(191) NULL AFTER compile_worker,
  -- How many times this job's step killed (crashed or hung) an executor process.
  ADD COLUMN IF NOT EXISTS executor_kills INT NOT NULL DEFAULT 0 AFTER retries;

-- Lease claim: WHERE state = ? AND session_id = ? ORDER BY priority DESC, retries, id LIMIT n
-- FOR UPDATE SKIP LOCKED. Higher priority first; the index order makes it a range scan that
-- stops after n rows (no filesort over the ready set).
CREATE INDEX IF NOT EXISTS idx_job_claim ON job (state, session_id, priority DESC, retries, id);

-- Configs whose jobs killed executors (crash, hang, dead GPU context). At the coordinator's
-- threshold the config's remaining jobs of that session are failed instead of retried forever.
CREATE TABLE IF NOT EXISTS config_quarantine (
  session_id BIGINT NOT NULL,
  config_id BIGINT NOT NULL,
  kills INT NOT NULL DEFAULT 0,
  last_error TEXT NULL,
  quarantined BOOLEAN NOT NULL DEFAULT FALSE,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (session_id, config_id),
  CONSTRAINT fk_quarantine_session FOREIGN KEY (session_id) REFERENCES session (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_quarantine_config FOREIGN KEY (config_id) REFERENCES conv_config (id)
    ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- A code object is stored once per content (kernel.hash); a job's compile step links the kernels
-- it built together with the build key (SHA-256 of arch, source, options and entries) so that the
-- eval step, on any host, finds the code object for the build it is about to do.
ALTER TABLE kernel
  ADD COLUMN IF NOT EXISTS entries VARCHAR(1024) CHARACTER SET ascii NOT NULL DEFAULT ''
    AFTER options;
ALTER TABLE job_kernel
  ADD COLUMN IF NOT EXISTS build_key CHAR(64) CHARACTER SET ascii NOT NULL DEFAULT '';
