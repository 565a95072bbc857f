//! Host sampling (being written).
