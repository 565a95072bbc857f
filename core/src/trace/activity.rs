//! What the CPU was doing, by event name: the CPU ranges and runtime calls that can explain a
//! GPU gap. The names are those PyTorch and its runtimes write into Kineto traces
//! (`docs/trace-format.md`, "What the CPU was doing", lists them with their sources).

/// The kinds of CPU range kept from `cpu_op` and `user_annotation` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpuKind {
    /// The DataLoader handing out a batch: `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`,
    /// `..._MultiProcessingDataLoaderIter.__next__`, or any range whose name says DataLoader.
    Data,
    /// An optimizer step (`Optimizer.step#<Class>.step`, DeepSpeed's CPU optimizers).
    Optimizer,
    /// An operator that copies a GPU scalar to the host and waits for it (`.item()`).
    Sync,
    /// An `aten::` operator at least [`CPU_OP_MIN_US`] long (it counts as computing on the
    /// CPU only if no runtime call starts inside it, decided in [`super::gaps`]).
    CpuOp,
}

/// Duration (µs) from which an `aten::` operator that starts no runtime call is computation
/// on the CPU rather than the dispatch of a GPU operator: dispatching and launching one costs
/// 5–20 µs (HTA's CUDA kernel launch statistics docs, `docs/trace-format.md`), so 100 µs is
/// five times the slowest launch.
pub const CPU_OP_MIN_US: f64 = 100.0;

/// Lower-case substring test without allocating.
fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The kind of a CPU range, from its name and duration; `None` for ranges gpuwhy does not
/// keep.
pub(crate) fn classify(name: &str, dur: f64) -> Option<CpuKind> {
    if contains_ci(name, "dataloader") {
        Some(CpuKind::Data)
    } else if name.starts_with("Optimizer.step#")
        || ["CPUAdam", "CPUAdagrad", "CPULion"]
            .iter()
            .any(|n| name.contains(n))
    {
        Some(CpuKind::Optimizer)
    } else if matches!(name, "aten::item" | "aten::_local_scalar_dense") {
        Some(CpuKind::Sync)
    } else if name.starts_with("aten::") && dur >= CPU_OP_MIN_US {
        Some(CpuKind::CpuOp)
    } else {
        None
    }
}

/// A CUDA/HIP runtime or driver call that allocates or frees device or pinned host memory.
/// `cudaFree` and `cudaFreeHost` synchronise the device, and every one of them takes the
/// driver's time; PyTorch's caching allocator exists to keep them out of the loop. The
/// stream-ordered `cudaMallocAsync`/`cudaFreeAsync` do not block and are not counted.
pub(crate) fn is_allocator_call(name: &str) -> bool {
    let base = name
        .strip_suffix("_v2")
        .or_else(|| name.strip_suffix("_v3"))
        .unwrap_or(name);
    matches!(
        base,
        "cudaMalloc"
            | "cudaFree"
            | "cudaMallocHost"
            | "cudaFreeHost"
            | "cudaHostAlloc"
            | "cudaHostRegister"
            | "cudaHostUnregister"
            | "cudaMallocManaged"
            | "cudaMallocPitch"
            | "cuMemAlloc"
            | "cuMemFree"
            | "cuMemAllocHost"
            | "cuMemFreeHost"
            | "cuMemHostAlloc"
            | "cuMemCreate"
            | "cuMemRelease"
            | "cuMemMap"
            | "cuMemUnmap"
            | "cuMemSetAccess"
            | "cuMemAddressReserve"
            | "cuMemAddressFree"
            | "hipMalloc"
            | "hipFree"
            | "hipHostMalloc"
            | "hipHostFree"
            | "hipMallocManaged"
            | "hipExtMallocWithFlags"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_real_traces_classify() {
        for (name, kind) in [
            (
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                CpuKind::Data,
            ),
            (
                "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                CpuKind::Data,
            ),
            ("[_TrainingEpochLoop].train_dataloader_next", CpuKind::Data),
            ("Optimizer.step#AdamW.step", CpuKind::Optimizer),
            ("Optimizer.step#DeepSpeedCPUAdam.step", CpuKind::Optimizer),
            ("aten::item", CpuKind::Sync),
            ("aten::_local_scalar_dense", CpuKind::Sync),
        ] {
            assert_eq!(classify(name, 1.0), Some(kind), "{name}");
        }
        assert_eq!(classify("aten::addmm", 5_000.0), Some(CpuKind::CpuOp));
        assert_eq!(classify("aten::addmm", 12.0), None, "a dispatch");
        assert_eq!(classify("Optimizer.zero_grad#SGD.zero_grad", 500.0), None);
        assert_eq!(classify("forward", 5_000.0), None);
        for n in [
            "cudaFree",
            "cudaMalloc",
            "hipFree",
            "cuMemAlloc_v2",
            "cudaFreeHost",
        ] {
            assert!(is_allocator_call(n), "{n}");
        }
        for n in ["cudaFreeAsync", "cudaLaunchKernel", "cudaMemcpyAsync"] {
            assert!(!is_allocator_call(n), "{n}");
        }
    }
}
