from ._model import (
    IDENTIFIER_KINDS as IDENTIFIER_KINDS,
    IDENTIFIER_STATUSES as IDENTIFIER_STATUSES,
    RESOLVED as RESOLVED,
    UNCHECKED as UNCHECKED,
    UNRESOLVED as UNRESOLVED,
    Identifier as Identifier,
    SurfaceError as SurfaceError,
)
