-- tuna schema, version 9: which worker built each stored code object (issue 15 part 6).
-- The coordinator stores code objects only from workers holding the compile role's token
-- (PutKernels) and records the first one that sent each blob. Eval hosts on the CPU backend load
-- a shared object only when it carries this provenance (docs/OPERATIONS.md, "Trust model").
-- Rows stored before this version have NULL: eval hosts rebuild those locally.
-- Re-runnable: ADD COLUMN IF NOT EXISTS (MariaDB).

ALTER TABLE kernel ADD COLUMN IF NOT EXISTS built_by VARCHAR(191) NULL;
