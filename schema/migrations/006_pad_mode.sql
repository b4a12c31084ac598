-- tuna schema, version 6: MIOpen's padding mode of a config (MITuna's conv_config.pad_mode).
-- 'same' / 'valid' only where the mode changes the output size (tuner_core/problem/problem.h):
-- keys of MIOpen's shipped find dbs tuned with miopenPaddingSame record pad 0 and an output of
-- ceil(in / stride). Every existing row is 'default'. Re-runnable (ADD COLUMN IF NOT EXISTS).
ALTER TABLE conv_config
  ADD COLUMN IF NOT EXISTS pad_mode ENUM('default', 'same', 'valid') NOT NULL DEFAULT 'default'
  AFTER mode;
