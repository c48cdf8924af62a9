//! Domain types shared by every layer: entities, Edm values, names, timestamps,
//! continuation tokens, key ranges, the row a filter reads, stored access policies, the
//! entity writes ([`mod@write`]) and the service's error vocabulary ([`error`]: the wire
//! error registry and [`error::ApiError`]). No I/O, no HTTP, no storage engine.

pub mod continuation;
pub mod edm;
pub mod entity;
pub mod error;
pub mod key_range;
pub mod names;
pub mod policy;
pub mod row;
pub mod time;
pub mod write;

pub use edm::{EdmRef, EdmType, EdmValue};
pub use entity::{Entity, EntityFields, EntityView};
pub use key_range::{utf16_cmp, KeyBound, KeyRange};
pub use policy::AccessPolicy;
pub use row::Row;
pub use time::Ticks;
pub use write::{Condition, EntityWrite, NewEntity};
