fn main(){ println!("{}", nvml_sim_bundle::SIM_LIB.len()); }
