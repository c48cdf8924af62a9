//! [`Reads`]: point reads of entities through the entity cache (`cache.rs`), and the
//! torn-row rule that every read made without the
//! partition's lock follows.
//!
//! **The torn-row rule.** An entity is stored as a head and, when it has long values,
//! a heap: two records, read one after the other. Reads take no lock (a store read sees
//! a consistent snapshot of one key, not of two), so a write can land between the two
//! reads; the heap repeats its head's Timestamp (unique per write), and a heap of
//! another write, or none where the head needs one, is [`StoreError::Torn`]. Such a read
//! is repeated once under the partition's stripe lock ([`reread_torn`]), where
//! no write can come between the two reads; a torn row read under the lock
//! ([`read_locked`]) means the store is corrupt.

use super::cache::{EntityCache, Lookup};
use super::catalog::Catalog;
use super::rendition::Rendition;
use super::stripes::Stripes;
use super::PartitionError;
use aztable_model::{Entity, EntityView};
use aztable_store::{codec, keys, Store, StoreError};
use std::sync::Arc;

/// See the module documentation.
pub struct Reads {
    store: Arc<dyn Store>,
    /// Resolves table names to ids.
    catalog: Arc<Catalog>,
    /// Taken only by the torn-row rule's second read.
    stripes: Arc<Stripes>,
    /// Stored bytes of recently read entities.
    entity_cache: Arc<EntityCache>,
}

impl std::fmt::Debug for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reads").finish_non_exhaustive()
    }
}

impl Reads {
    pub(super) fn new(
        store: Arc<dyn Store>,
        catalog: Arc<Catalog>,
        stripes: Arc<Stripes>,
        entity_cache: Arc<EntityCache>,
    ) -> Self {
        Reads { store, catalog, stripes, entity_cache }
    }

    /// Reads one entity without taking any lock (but for the rare read that meets a
    /// concurrent write between the entity's head and its heap: see the torn-row rule).
    /// Goes through the entity cache. [`Reads::get_entity_with`], owned.
    pub fn get_entity(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rk: &str,
    ) -> Result<Option<Entity>, PartitionError> {
        self.get_entity_with(account, table, pk, rk, |view| view.to_entity())
    }

    /// The point read: hands the entity to `f` as a view of its stored bytes, from the
    /// entity cache or from the store (then cached), without copying a key, name or
    /// value (what a point read of a hot entity spends most of its own time on
    /// otherwise). Takes no lock but for the torn-row rule's second read.
    pub fn get_entity_with<R>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rk: &str,
        f: impl FnOnce(&EntityView<'_>) -> R,
    ) -> Result<Option<R>, PartitionError> {
        let table_id = self.catalog.table_id(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let key = keys::entity_key(table_id, pk, rk);
        if let Some((head, heap)) = self.entity_cache.get(&key) {
            let view = codec::decode_entity_view(pk, rk, &head, heap.as_deref())?;
            return Ok(Some(f(&view)));
        }
        self.read_missed(table_id, &key, pk, rk, f, |_, head, heap, generation| {
            self.entity_cache.insert(&key, head, heap, generation);
        })
    }

    /// The point read of an answer rendered by `render` (the entity's ETag and response
    /// body) under `tag`, which names everything the body depends on besides the row
    /// ([`Rendition`]). A rendering under the same tag kept in the entity cache is
    /// handed back as it is; otherwise the row is rendered and the rendering kept in
    /// its place, by [`Reads::get_entity_with`]'s rules (a read that a write came
    /// during keeps nothing).
    pub fn get_entity_rendered(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rk: &str,
        tag: &[u8],
        render: impl FnOnce(&EntityView<'_>) -> (String, Vec<u8>),
    ) -> Result<Option<Rendition>, PartitionError> {
        let table_id = self.catalog.table_id(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let key = keys::entity_key(table_id, pk, rk);
        let rendition = |view: &EntityView<'_>| {
            let (etag, body) = render(view);
            Rendition::new(tag, etag, body)
        };
        match self.entity_cache.get_rendered(&key, tag) {
            Lookup::Rendered(r) => return Ok(Some(r)),
            Lookup::Row((head, heap)) => {
                let r = rendition(&codec::decode_entity_view(pk, rk, &head, heap.as_deref())?);
                self.entity_cache.rendered(&key, &head, r.clone());
                return Ok(Some(r));
            }
            Lookup::Miss => {}
        }
        self.read_missed(table_id, &key, pk, rk, rendition, |r, _, _, generation| {
            self.entity_cache.insert_rendered(&key, r.clone(), generation);
        })
    }

    /// The store read of a point read the entity cache did not answer: the head and
    /// heap (torn-row rule), decoded and handed to `f`; then `keep` is offered what `f`
    /// returned, the bytes read and the cache generation taken before reading them (a
    /// write landing meanwhile keeps the read out of the cache).
    fn read_missed<R>(
        &self,
        table_id: u64,
        key: &[u8],
        pk: &str,
        rk: &str,
        f: impl FnOnce(&EntityView<'_>) -> R,
        keep: impl FnOnce(&R, &[u8], Option<&[u8]>, u64),
    ) -> Result<Option<R>, PartitionError> {
        let generation = self.entity_cache.generation(key);
        let Some(head) = self.store.get(key)? else {
            return Ok(None);
        };
        let heap = match read_heap(self.store.as_ref(), key, &head) {
            Ok(heap) => heap,
            Err(StoreError::Torn) => return self.reread_torn_with(table_id, key, pk, rk, f),
            Err(e) => return Err(e.into()),
        };
        match codec::decode_entity_view(pk, rk, &head, heap.as_deref()) {
            Ok(view) => {
                let r = f(&view);
                keep(&r, &head, heap.as_deref(), generation);
                Ok(Some(r))
            }
            Err(StoreError::Torn) => self.reread_torn_with(table_id, key, pk, rk, f),
            Err(e) => Err(e.into()),
        }
    }

    /// [`reread_torn`], the entity handed to `f`.
    fn reread_torn_with<R>(
        &self,
        table_id: u64,
        key: &[u8],
        pk: &str,
        rk: &str,
        f: impl FnOnce(&EntityView<'_>) -> R,
    ) -> Result<Option<R>, PartitionError> {
        let entity = reread_torn(self.store.as_ref(), &self.stripes, table_id, key, pk, rk)?;
        Ok(entity.map(|e| f(&e.view())))
    }
}

/// The torn-row rule's second read: the entity under `key`, read with the partition's
/// stripe lock held, so no write can come between its head and heap.
pub(super) fn reread_torn(
    store: &dyn Store,
    stripes: &Stripes,
    table_id: u64,
    key: &[u8],
    pk: &str,
    rk: &str,
) -> Result<Option<Entity>, StoreError> {
    let _guard = stripes.lock(table_id, pk);
    Ok(read_locked(store, key, pk, rk)?.map(|(e, _)| e))
}

/// Reads an entity by its key with the partition's lock held (inside a transaction, or
/// by [`reread_torn`]): the entity and whether it has a heap. A torn row here
/// is corruption, not a race.
pub(super) fn read_locked(
    store: &dyn Store,
    key: &[u8],
    pk: &str,
    rk: &str,
) -> Result<Option<(Entity, bool)>, StoreError> {
    // (one MultiGet of both keys measured slower than two reads)
    let read = match store.get(key)? {
        Some(head) => decode_head(store, key, pk.to_owned(), rk.to_owned(), &head).map(Some),
        None => Ok(None),
    };
    read.map_err(|e| match e {
        StoreError::Torn => StoreError::Corrupt("entity heap does not belong to its head".into()),
        e => e,
    })
}

/// Decodes a head read under `key`, reading its heap when it has one (the bool).
/// [`StoreError::Torn`] when the heap is of another write, or gone.
pub(super) fn decode_head(
    store: &dyn Store,
    key: &[u8],
    pk: String,
    rk: String,
    head: &[u8],
) -> Result<(Entity, bool), StoreError> {
    let heap = read_heap(store, key, head)?;
    Ok((codec::decode_entity(pk, rk, head, heap.as_deref())?, heap.is_some()))
}

/// The heap of a head read under `key`, when the head has one; [`StoreError::Torn`] when
/// it should and is gone.
fn read_heap(store: &dyn Store, key: &[u8], head: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
    match codec::heap_needed(head)? {
        None => Ok(None),
        Some(_) => store.get(&keys::heap_key(key))?.ok_or(StoreError::Torn).map(Some),
    }
}
