"""Random and property-based case generators (docs/design.md §2): one grammar, three drivers."""

from generators.choice import (
    AtherisChoices,
    ChoiceSource,
    HypothesisChoices,
    SeededChoices,
)
from generators.grammar import cases, from_seed, generate, generate_module
from generators.profile import Profile, ProfileError, load_profile, profile_names

__all__ = [
    "AtherisChoices",
    "ChoiceSource",
    "HypothesisChoices",
    "Profile",
    "ProfileError",
    "SeededChoices",
    "cases",
    "from_seed",
    "generate",
    "generate_module",
    "load_profile",
    "profile_names",
]
