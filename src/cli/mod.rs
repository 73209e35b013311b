pub mod build;
pub mod compare;
pub mod devices;
