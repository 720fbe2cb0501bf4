//! Which part of the protocol an output covers.

/// The stable surface leaves experimental methods and fields out; the experimental surface has
/// everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Stable methods and fields only: what `generate-*` writes without `--experimental`.
    Stable,
    /// Everything, experimental methods and fields included.
    Experimental,
}

impl Surface {
    /// Both surfaces, stable first.
    pub const ALL: [Surface; 2] = [Surface::Stable, Surface::Experimental];

    /// Whether a method or field with this experimental flag belongs to the surface.
    pub fn includes(self, experimental: bool) -> bool {
        matches!(self, Surface::Experimental) || !experimental
    }

    /// Whether this is the experimental surface.
    pub fn is_experimental(self) -> bool {
        matches!(self, Surface::Experimental)
    }
}
