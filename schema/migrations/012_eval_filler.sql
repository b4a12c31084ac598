-- tuna schema, version 12: jobs that fill a device's idle moments (issue 19).
-- A find job of a non-tunable solver (the naive kernels, on GPU targets) needs one cheap build
-- that every config shares, so it is ready to run long before the tunable solvers' builds are;
-- run as soon as ready, a session's fillers were all gone in its first seconds and the devices
-- then waited for the compiles. Eval claims take a filler after the other ready jobs of its
-- priority, so the fillers run where nothing else is ready (compile claims keep the id order:
-- their cheap build comes first). Re-runnable: IF NOT EXISTS.

ALTER TABLE job ADD COLUMN IF NOT EXISTS filler BOOLEAN NOT NULL DEFAULT FALSE AFTER priority;

-- Eval claim: WHERE state = 'compiled' AND session_id = ? ORDER BY priority DESC, filler, retries,
-- id LIMIT n FOR UPDATE SKIP LOCKED: a range scan in index order, as idx_job_claim is for compile.
CREATE INDEX IF NOT EXISTS idx_job_claim_eval ON job (state, session_id, priority DESC, filler, retries, id);
