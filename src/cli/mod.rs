pub mod build;
pub mod compare;
pub mod devices;
pub mod ptx;
pub mod report;
pub mod sweep;
