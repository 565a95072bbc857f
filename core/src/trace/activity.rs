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
}

/// Lower-case substring test without allocating.
fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The kind of a CPU range, from its name; `None` for ranges gpuwhy does not keep.
///
/// Other `aten::` operators are not kept: whether one computed on the CPU or prepared GPU
/// work cannot be told reliably from a trace (cuDNN and Triton launch through driver calls
/// that older traces do not record, and sampled traces drop events), so time under them
/// counts as host work the trace does not name.
pub(crate) fn classify(name: &str) -> Option<CpuKind> {
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
            assert_eq!(classify(name), Some(kind), "{name}");
        }
        assert_eq!(classify("aten::addmm"), None);
        assert_eq!(classify("Optimizer.zero_grad#SGD.zero_grad"), None);
        assert_eq!(classify("forward"), None);
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
