//! Merging the file objects of a request into one [`FileRequest`] per path.
//!
//! Every field of every object goes through [`Slot`], so "an object that mixes `content` with
//! `edits`" and "two objects for one path that disagree" are the same check with the same
//! message: the later field conflicts with what the path already has. The error points at the
//! later field when both are in one object, and at the later object when they are in two
//! (SPEC §3a); the message names both fields' pointers either way.

use std::collections::HashMap;

use crate::request::{EditSpec, FileRequest, RequestError};

use super::de::place;

/// The key under which objects for one path merge: the path lexically normalized.
///
/// `./` and empty segments vanish, `a/../b` collapses to `b`, a leading `/` is kept, and `..`
/// that climbs above the start is kept (the writer rejects it if it leaves the root). Symlinks
/// and absolute-versus-relative spellings of one file are not unified here: that needs the file
/// system, and is the writer's business.
pub(crate) fn merge_key(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// The files of a request in order of first appearance.
#[derive(Default)]
pub(super) struct Batch {
    slots: Vec<Slot>,
    by_key: HashMap<String, usize>,
}

impl Batch {
    /// The slot for `path`, to which the object at `pointer` now adds its fields (the path's
    /// first object if new).
    pub(super) fn slot(&mut self, path: &str, pointer: &str) -> &mut Slot {
        let key = merge_key(path);
        let index = match self.by_key.get(&key) {
            Some(&index) => index,
            None => {
                let mut file = FileRequest::new(path);
                file.pointer = Some(pointer.to_owned());
                self.slots.push(Slot {
                    file,
                    at: Default::default(),
                    object: String::new(),
                });
                self.by_key.insert(key, self.slots.len() - 1);
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.object = pointer.to_owned();
        slot
    }

    pub(super) fn into_files(self) -> Vec<FileRequest> {
        // A new vector: `collect` would keep the slots' allocation (more than twice as wide as
        // a file request) for as long as the batch lives.
        let mut files = Vec::with_capacity(self.slots.len());
        files.extend(self.slots.into_iter().map(|slot| slot.file));
        files
    }
}

/// Where each operation of a path was first given: the field's pointer and its object's.
type Source = Option<(String, String)>;

#[derive(Default)]
struct Sources {
    edits: Source,
    content: Source,
    delete: Source,
    move_to: Source,
    expect_hash: Source,
}

/// One path being assembled from its objects.
pub(super) struct Slot {
    file: FileRequest,
    at: Sources,
    /// Pointer of the object whose fields are being added now.
    object: String,
}

impl Slot {
    /// Fails when `field` (at `pointer`) cannot join an operation the path already has.
    fn refuse(
        &self,
        field: &str,
        pointer: &str,
        rivals: &[(&str, &Source)],
    ) -> Result<(), RequestError> {
        for (rival, source) in rivals {
            if let Some((at, object)) = source {
                return Err(RequestError::new(format!(
                    "`{field}` at {} conflicts with `{rival}` at {} for `{}`",
                    place(pointer),
                    place(at),
                    self.file.path
                ))
                .at(self.culprit(pointer, object))
                .hint(
                    "a path either gets edits (optionally with moveTo), new content, \
                     delete: true, or moveTo alone",
                ));
            }
        }
        Ok(())
    }

    fn differs(&self, field: &str, pointer: &str, earlier: &Source) -> RequestError {
        let (at, object) = earlier.clone().unwrap_or_default();
        RequestError::new(format!(
            "`{field}` at {} differs from `{field}` at {} for `{}`",
            place(pointer),
            place(&at),
            self.file.path
        ))
        .at(self.culprit(pointer, &object))
    }

    /// Where a conflict with a field of `rival_object` points: the later field when it is in
    /// the same object, else the later object.
    fn culprit(&self, pointer: &str, rival_object: &str) -> String {
        if rival_object == self.object {
            pointer.to_owned()
        } else {
            self.object.clone()
        }
    }

    fn source(&self, pointer: &str) -> Source {
        Some((pointer.to_owned(), self.object.clone()))
    }

    /// Room for `n` more edits (an `edits` array's length), so the list is not grown by doubling.
    pub(super) fn reserve_edits(&mut self, n: usize) {
        self.file.edits.reserve_exact(n);
    }

    pub(super) fn add_edit(&mut self, edit: EditSpec, pointer: &str) -> Result<(), RequestError> {
        self.refuse(
            "edits",
            pointer,
            &[("content", &self.at.content), ("delete", &self.at.delete)],
        )?;
        if self.at.edits.is_none() {
            self.at.edits = self.source(pointer);
        }
        self.file.edits.push(edit);
        Ok(())
    }

    pub(super) fn set_content(&mut self, content: &str, pointer: &str) -> Result<(), RequestError> {
        self.refuse(
            "content",
            pointer,
            &[
                ("edits", &self.at.edits),
                ("delete", &self.at.delete),
                ("moveTo", &self.at.move_to),
            ],
        )?;
        match &self.file.content {
            Some(earlier) if earlier != content => {
                Err(self.differs("content", pointer, &self.at.content))
            }
            Some(_) => Ok(()),
            None => {
                self.file.content = Some(content.to_owned());
                self.at.content = self.source(pointer);
                Ok(())
            }
        }
    }

    pub(super) fn set_delete(&mut self, pointer: &str) -> Result<(), RequestError> {
        self.refuse(
            "delete",
            pointer,
            &[
                ("edits", &self.at.edits),
                ("content", &self.at.content),
                ("moveTo", &self.at.move_to),
            ],
        )?;
        self.file.delete = true;
        if self.at.delete.is_none() {
            self.at.delete = self.source(pointer);
        }
        Ok(())
    }

    pub(super) fn set_move_to(&mut self, target: &str, pointer: &str) -> Result<(), RequestError> {
        self.refuse(
            "moveTo",
            pointer,
            &[("content", &self.at.content), ("delete", &self.at.delete)],
        )?;
        match &self.file.move_to {
            Some(earlier) if merge_key(earlier) != merge_key(target) => {
                Err(self.differs("moveTo", pointer, &self.at.move_to))
            }
            Some(_) => Ok(()),
            None => {
                self.file.move_to = Some(target.to_owned());
                self.file.move_to_pointer = Some(pointer.to_owned());
                self.at.move_to = self.source(pointer);
                Ok(())
            }
        }
    }

    pub(super) fn set_expect_hash(
        &mut self,
        hash: String,
        pointer: &str,
    ) -> Result<(), RequestError> {
        match &self.file.expect_hash {
            Some(earlier) if *earlier != hash => {
                Err(self.differs("expectHash", pointer, &self.at.expect_hash))
            }
            Some(_) => Ok(()),
            None => {
                self.file.expect_hash = Some(hash);
                self.at.expect_hash = self.source(pointer);
                Ok(())
            }
        }
    }
}
