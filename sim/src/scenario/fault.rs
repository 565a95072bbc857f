//! Scripted faults: XID events, a GPU falling off the bus, a GPU removed from the device
//! list, error windows and slow calls.

use serde::Deserialize;

/// What kind of fault an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FaultKind {
    Xid,
    GpuLost,
    GpuRemoved,
    Error,
    Latency,
}

/// A fault as written in the file; which fields are required depends on `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    kind: FaultKind,
    device: Option<u32>,
    at_s: Option<f64>,
    code: Option<u64>,
    function: Option<String>,
    from_s: Option<f64>,
    until_s: Option<f64>,
    ms: Option<u64>,
    #[serde(default, rename = "note")]
    _note: Option<String>,
}

/// Functions that manage the library itself and so ignore `error` and `latency` faults.
const UNFAULTABLE: &[&str] = &[
    "nvmlInit_v2",
    "nvmlInit",
    "nvmlInitWithFlags",
    "nvmlShutdown",
    "nvmlErrorString",
];

/// The XID a GPU that fell off the bus reports.
pub const XID_GPU_LOST: u64 = 79;

/// A validated fault. `device: None` means every device.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// An XID critical error event at `at_s`.
    Xid {
        /// Affected device, or all.
        device: Option<u32>,
        /// When it happens.
        at_s: f64,
        /// The XID number.
        code: u64,
    },
    /// From `at_s` on the device answers GPU_IS_LOST; an XID 79 event is queued.
    GpuLost {
        /// Affected device, or all.
        device: Option<u32>,
        /// When it happens.
        at_s: f64,
    },
    /// From `at_s` on the device is gone from the device list: `nvmlDeviceGetCount` no
    /// longer counts it, the devices after it move down one index in
    /// `nvmlDeviceGetHandleByIndex`, and calls through a handle taken before answer
    /// GPU_IS_LOST. No XID is raised (the GPU was unbound or detached, it did not crash).
    GpuRemoved {
        /// Affected device, or all.
        device: Option<u32>,
        /// When it happens.
        at_s: f64,
    },
    /// `function` returns `code` while `from_s <= t < until_s`.
    Error {
        /// Affected device, or all (and the system functions).
        device: Option<u32>,
        /// Exported function name.
        function: String,
        /// The `nvmlReturn_t` to return.
        code: u32,
        /// Window start.
        from_s: f64,
        /// Window end (exclusive).
        until_s: f64,
    },
    /// `function` sleeps `ms` wall milliseconds while `from_s <= t < until_s`.
    Latency {
        /// Affected device, or all (and the system functions).
        device: Option<u32>,
        /// Exported function name.
        function: String,
        /// Wall-clock delay.
        ms: u64,
        /// Window start.
        from_s: f64,
        /// Window end (exclusive).
        until_s: f64,
    },
}

impl Fault {
    /// The device this fault is limited to, if any.
    pub fn device(&self) -> Option<u32> {
        match self {
            Fault::Xid { device, .. }
            | Fault::GpuLost { device, .. }
            | Fault::GpuRemoved { device, .. }
            | Fault::Error { device, .. }
            | Fault::Latency { device, .. } => *device,
        }
    }

    /// Whether the fault concerns device `index` (`None`: a call about no device).
    pub fn applies_to(&self, index: Option<u32>) -> bool {
        match (self.device(), index) {
            (None, _) => true,
            (Some(d), Some(i)) => d == i,
            (Some(_), None) => false,
        }
    }

    /// The XID event this fault raises, as (time, XID number).
    pub fn xid_event(&self) -> Option<(f64, u64)> {
        match self {
            Fault::Xid { at_s, code, .. } => Some((*at_s, *code)),
            Fault::GpuLost { at_s, .. } => Some((*at_s, XID_GPU_LOST)),
            _ => None,
        }
    }
}

impl FaultFile {
    /// Checks the fields this kind needs and refuses the ones it ignores.
    pub fn resolve(&self, device_count: u32) -> Result<Fault, String> {
        if let Some(d) = self.device {
            if d >= device_count {
                return Err(format!(
                    "`device` {d} does not exist (the scenario has {device_count})"
                ));
            }
        }
        let need = |what: &str| format!("a `{}` fault needs `{what}`", self.kind_name());
        let device = self.device;
        let fault = match self.kind {
            FaultKind::Xid => Fault::Xid {
                device,
                at_s: self.at_s.ok_or_else(|| need("at_s"))?,
                code: self.code.ok_or_else(|| need("code"))?,
            },
            FaultKind::GpuLost => Fault::GpuLost {
                device,
                at_s: self.at_s.ok_or_else(|| need("at_s"))?,
            },
            FaultKind::GpuRemoved => Fault::GpuRemoved {
                device,
                at_s: self.at_s.ok_or_else(|| need("at_s"))?,
            },
            FaultKind::Error | FaultKind::Latency => {
                let function = self.function.clone().ok_or_else(|| need("function"))?;
                super::check_function_name(&function)?;
                if UNFAULTABLE.contains(&function.as_str()) {
                    return Err(format!(
                        "`{function}` cannot be faulted; use the top-level `init_error` to make init fail"
                    ));
                }
                let from_s = self.from_s.unwrap_or(0.0);
                let until_s = self.until_s.unwrap_or(f64::INFINITY);
                if until_s < from_s {
                    return Err("`until_s` is before `from_s`".into());
                }
                if self.kind == FaultKind::Error {
                    let code = self.code.ok_or_else(|| need("code"))?;
                    Fault::Error {
                        device,
                        function,
                        code: u32::try_from(code)
                            .map_err(|_| "`code` is not an nvmlReturn_t".to_string())?,
                        from_s,
                        until_s,
                    }
                } else {
                    Fault::Latency {
                        device,
                        function,
                        ms: self.ms.ok_or_else(|| need("ms"))?,
                        from_s,
                        until_s,
                    }
                }
            }
        };
        self.refuse_unused()?;
        Ok(fault)
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            FaultKind::Xid => "xid",
            FaultKind::GpuLost => "gpu_lost",
            FaultKind::GpuRemoved => "gpu_removed",
            FaultKind::Error => "error",
            FaultKind::Latency => "latency",
        }
    }

    /// A field the kind does not read is a mistake the author should hear about.
    fn refuse_unused(&self) -> Result<(), String> {
        let instant = matches!(
            self.kind,
            FaultKind::Xid | FaultKind::GpuLost | FaultKind::GpuRemoved
        );
        let unused = [
            ("at_s", !instant && self.at_s.is_some()),
            ("from_s", instant && self.from_s.is_some()),
            ("until_s", instant && self.until_s.is_some()),
            ("function", instant && self.function.is_some()),
            (
                "code",
                matches!(
                    self.kind,
                    FaultKind::GpuLost | FaultKind::GpuRemoved | FaultKind::Latency
                ) && self.code.is_some(),
            ),
            ("ms", self.kind != FaultKind::Latency && self.ms.is_some()),
        ];
        match unused.iter().find(|(_, bad)| *bad) {
            Some((field, _)) => Err(format!(
                "a `{}` fault does not use `{field}`",
                self.kind_name()
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(json: &str) -> Result<Fault, String> {
        let file: FaultFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
        file.resolve(2)
    }

    #[test]
    fn each_kind_parses() {
        assert_eq!(
            fault(r#"{"kind": "xid", "device": 1, "at_s": 3, "code": 48}"#),
            Ok(Fault::Xid {
                device: Some(1),
                at_s: 3.0,
                code: 48
            })
        );
        assert_eq!(
            fault(r#"{"kind": "gpu_lost", "at_s": 6}"#).map(|f| f.xid_event()),
            Ok(Some((6.0, XID_GPU_LOST)))
        );
        assert_eq!(
            fault(
                r#"{"kind": "error", "function": "nvmlDeviceGetPowerUsage", "code": 3, "from_s": 1}"#
            ),
            Ok(Fault::Error {
                device: None,
                function: "nvmlDeviceGetPowerUsage".into(),
                code: 3,
                from_s: 1.0,
                until_s: f64::INFINITY
            })
        );
        assert_eq!(
            fault(r#"{"kind": "gpu_removed", "device": 1, "at_s": 4}"#),
            Ok(Fault::GpuRemoved {
                device: Some(1),
                at_s: 4.0
            })
        );
        assert_eq!(
            fault(r#"{"kind": "gpu_removed", "at_s": 4}"#).map(|f| f.xid_event()),
            Ok(None),
            "a removed GPU raises no XID"
        );
        let latency =
            fault(r#"{"kind": "latency", "function": "nvmlDeviceGetPcieThroughput", "ms": 20}"#);
        assert!(
            matches!(latency, Ok(Fault::Latency { ms: 20, .. })),
            "{latency:?}"
        );
    }

    #[test]
    fn mistakes_are_explained() {
        for (json, needle) in [
            (r#"{"kind": "xid", "at_s": 3}"#, "needs `code`"),
            (
                r#"{"kind": "xid", "at_s": 3, "code": 1, "device": 2}"#,
                "does not exist",
            ),
            (r#"{"kind": "gpu_lost", "from_s": 3}"#, "needs `at_s`"),
            (
                r#"{"kind": "gpu_lost", "at_s": 3, "until_s": 4}"#,
                "does not use `until_s`",
            ),
            (
                r#"{"kind": "error", "function": "nvmlFoo", "code": 3}"#,
                "unknown NVML function",
            ),
            (
                r#"{"kind": "error", "function": "nvmlDeviceGetCount", "code": 3, "from_s": 5, "until_s": 1}"#,
                "before",
            ),
            (
                r#"{"kind": "latency", "function": "nvmlDeviceGetCount"}"#,
                "needs `ms`",
            ),
            (
                r#"{"kind": "error", "function": "nvmlInit_v2", "code": 9}"#,
                "init_error",
            ),
            (
                r#"{"kind": "gpu_removed", "at_s": 3, "code": 15}"#,
                "does not use `code`",
            ),
            (r#"{"kind": "gpu_removed"}"#, "needs `at_s`"),
            (r#"{"kind": "crash"}"#, "unknown variant `crash`"),
        ] {
            let err = fault(json).expect_err(json);
            assert!(err.contains(needle), "{json}: {err}");
        }
    }
}
