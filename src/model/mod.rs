//! Domain types shared by every layer: entities, Edm values, names, timestamps and
//! continuation tokens. No I/O, no HTTP, no storage engine.

pub mod continuation;
pub mod edm;
pub mod entity;
pub mod names;
pub mod time;

pub use edm::{EdmRef, EdmType, EdmValue};
pub use entity::Entity;
pub use time::Ticks;
