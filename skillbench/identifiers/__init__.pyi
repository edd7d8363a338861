from ._model import (
    IDENTIFIER_KINDS as IDENTIFIER_KINDS,
    IDENTIFIER_STATUSES as IDENTIFIER_STATUSES,
    RESOLVED as RESOLVED,
    UNCHECKED as UNCHECKED,
    UNRESOLVED as UNRESOLVED,
    Identifier as Identifier,
    SurfaceError as SurfaceError,
)
from ._week import (
    IdentifierOptions as IdentifierOptions,
    IdentifierPassError as IdentifierPassError,
    IdentifierReport as IdentifierReport,
    check_week as check_week,
)
