//! The simulator's scenario parser and validator, as `nvmlInit` runs it on the file named by
//! `GPUWHY_SIM_SCENARIO`: an error message for a bad file, never a panic or a hang.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = nvml_sim::check_scenario(text);
    }
});
