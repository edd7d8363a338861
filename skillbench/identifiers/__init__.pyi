from ._extract import CONVENTIONAL_ALIASES as CONVENTIONAL_ALIASES, check_answer as check_answer
from ._model import (
    IDENTIFIER_KINDS as IDENTIFIER_KINDS,
    IDENTIFIER_STATUSES as IDENTIFIER_STATUSES,
    RESOLVED as RESOLVED,
    UNCHECKED as UNCHECKED,
    UNRESOLVED as UNRESOLVED,
    Identifier as Identifier,
    SurfaceError as SurfaceError,
)
from ._precision import (
    DETECTOR_FORMAT as DETECTOR_FORMAT,
    PRECISION_FLOOR as PRECISION_FLOOR,
    MeasuredPrecision as MeasuredPrecision,
    measured_kinds as measured_kinds,
    measured_precision as measured_precision,
)
from ._surface import (
    Surface as Surface,
    Surfaces as Surfaces,
    build_surface as build_surface,
    build_surface_from as build_surface_from,
    cache_dir as cache_dir,
    cache_file as cache_file,
    load_surfaces as load_surfaces,
)
from ._week import (
    IdentifierOptions as IdentifierOptions,
    IdentifierPassError as IdentifierPassError,
    IdentifierReport as IdentifierReport,
    check_week as check_week,
)
