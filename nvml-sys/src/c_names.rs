//! The C names of this crate's structs, for the header tests of this crate, the loader and
//! the simulator (feature `header-check`; only tests turn it on).

use crate::*;

macro_rules! c_named {
    ($($t:ty),+ $(,)?) => {
        $(impl nvml_header_check::CType for $t {
            fn c_names() -> Vec<String> {
                vec![stringify!($t).to_string()]
            }
        })+
    };
}

c_named!(
    nvmlPciInfo_t,
    nvmlUtilization_t,
    nvmlMemory_t,
    nvmlMemory_v2_t,
    nvmlTemperature_v1_t,
    nvmlFieldValue_t,
    nvmlEventData_t,
    nvmlGpmSupport_t,
    nvmlGpmMetricsGet_t,
    nvmlSample_t,
    nvmlProcessUtilizationSample_t,
    nvmlProcessInfo_v1_t,
);

impl nvml_header_check::CType for nvmlProcessInfo_t {
    fn c_names() -> Vec<String> {
        // `nvmlProcessInfo_t` is a typedef of the v2 struct, under both names.
        vec!["nvmlProcessInfo_t".into(), "nvmlProcessInfo_v2_t".into()]
    }
}
