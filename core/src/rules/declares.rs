//! What a rule declares about its findings besides the finding itself: the evidence it
//! needs before it can speak from samples ([`Needs`]), and the findings its mechanism can
//! produce ([`Produces`]), which `analysis` reads to weigh findings against each other.

/// What a rule's finding needs of its input before it can speak from samples
/// (docs/rules.md, "The evidence each claim needs").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// A reading of the GPU's state is enough — clock-event reasons, link, errors, memory,
    /// processes — so a one-sample snapshot (`nvidia-smi -q`) supports it; a lost share from
    /// a snapshot is still not measured.
    State,
    /// A pattern over time: at least [`MIN_SERIES_SAMPLES`] samples per GPU when decided
    /// from samples (step markers, a trace and merged ranks are series of their own).
    Series,
}

/// Samples per GPU below which no pattern over time is claimed from samples: a dip, a
/// period, a wait share or a spread of a handful of readings is one reading, not a
/// pattern. Ten samples resolve a share to 10 points and cover two periods of a 5-sample
/// pattern; the periodicity search itself wants 16 (`signals::stats::dominant_period`).
pub const MIN_SERIES_SAMPLES: usize = 10;

/// How a consequence's GPUs relate to its cause's, for [`Produces`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// On the same GPUs: the consequence names a GPU the cause names (a narrow link's
    /// GPU is the one whose copies are long).
    SameGpus,
    /// The others wait for the cause's GPUs: the consequence's first-named GPU (the
    /// straggler) is one of the cause's.
    OthersWaitFor,
    /// Over the whole job, whatever GPUs each names (a CPU-side optimizer idles every GPU).
    Job,
    /// Both carry an agreeing evidence item whose metric names this (`pageable`: the host
    /// waits at the very copies from pageable memory that the transfer finding measures).
    SharedEvidence(&'static str),
}

/// A finding this rule's mechanism can produce, and on which GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Produces {
    /// The consequence's rule id.
    pub id: &'static str,
    /// Where it shows.
    pub on: Relation,
    /// What the cause does to produce it, for the cause's summary ("the other GPUs wait
    /// for it").
    pub how: &'static str,
    /// Whether the consequence's lost share is the cause's cost (the time the others wait
    /// for a slowed GPU is what the slowdown costs), or holds other time too (the dips of a
    /// collective include the collective itself), so the cause keeps its own.
    pub carries: bool,
}
