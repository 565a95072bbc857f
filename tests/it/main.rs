//! End-to-end tests: gpuwhy's recorder through the simulated NVML, loaded by the real loader.

mod corpus;
mod devices;
mod driver_quirks;
mod evidence_windows;
mod fault_matrix;
mod faults;
mod faults_buffered;
mod field_batch;
mod health;
mod job_gpus;
mod loader;
mod memory;
mod mig;
mod report_io;
mod retention;
mod samples;
mod samples_cadence;
mod scenarios;
mod schema;
mod schema_baseline;
mod schema_merge;
mod slow_init;
mod slow_steps;
mod steps;
mod summary_schema;
mod wakeups;
