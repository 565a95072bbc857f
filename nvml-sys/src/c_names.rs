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
);
