//! The registry of wire error codes: each Azure error code string, its HTTP status and
//! its default message, in exhaustive matches.

/// An Azure Storage / Table service error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    AtomFormatNotSupported,
    AuthenticationFailed,
    AuthorizationFailure,
    AuthorizationPermissionMismatch,
    AuthorizationResourceTypeMismatch,
    AuthorizationServiceMismatch,
    AuthorizationProtocolMismatch,
    AuthorizationSourceIPMismatch,
    CommandsInBatchActOnDifferentPartitions,
    CorsPreflightFailure,
    /// 500, a project extension the service never answers: a read met data the store
    /// found damaged on disk (a block that fails its checksum). Retrying cannot help;
    /// the message names the damaged file.
    DataCorrupted,
    DuplicatePropertiesSpecified,
    EntityAlreadyExists,
    EntityTooLarge,
    /// 403: a write to the read-only secondary endpoint.
    InsufficientAccountPermissions,
    InternalError,
    InvalidAuthenticationInfo,
    InvalidDuplicateRow,
    InvalidHeaderValue,
    InvalidInput,
    InvalidQueryParameterValue,
    InvalidResourceName,
    InvalidUri,
    InvalidXmlDocument,
    MediaTypeNotSupported,
    MethodNotAllowed,
    MissingRequiredHeader,
    NoAuthenticationInformation,
    /// 501: an account-level operation addressed under a table (`GET /mytable/Tables`).
    NotImplemented,
    OperationTimedOut,
    OutOfRangeInput,
    PropertiesNeedValue,
    PropertyNameInvalid,
    PropertyNameTooLong,
    PropertyValueTooLarge,
    RequestBodyTooLarge,
    /// The service documents no code for a head its front end refuses (it answers bare
    /// HTTP errors there): this code (431) and the next two are named after the status.
    RequestHeaderFieldsTooLarge,
    /// 408: a request body that stopped arriving (`--bodyReadTimeout`, `--minBodyRate`).
    RequestTimeout,
    /// 414.
    RequestUriTooLong,
    ResourceNotFound,
    ServerBusy,
    TableAlreadyExists,
    /// 409: Create Table of a name deleted moments ago (`--tableDeleteDelay`).
    TableBeingDeleted,
    TableNotFound,
    TooManyProperties,
    UpdateConditionNotSatisfied,
    XMethodIncorrectCount,
    XMethodIncorrectValue,
    XMethodNotUsingPost,
}

impl ErrorCode {
    /// Returns the code string clients match on.
    pub fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            AtomFormatNotSupported => "AtomFormatNotSupported",
            AuthenticationFailed => "AuthenticationFailed",
            AuthorizationFailure => "AuthorizationFailure",
            AuthorizationPermissionMismatch => "AuthorizationPermissionMismatch",
            AuthorizationResourceTypeMismatch => "AuthorizationResourceTypeMismatch",
            AuthorizationServiceMismatch => "AuthorizationServiceMismatch",
            AuthorizationProtocolMismatch => "AuthorizationProtocolMismatch",
            AuthorizationSourceIPMismatch => "AuthorizationSourceIPMismatch",
            CommandsInBatchActOnDifferentPartitions => "CommandsInBatchActOnDifferentPartitions",
            CorsPreflightFailure => "CorsPreflightFailure",
            DataCorrupted => "DataCorrupted",
            DuplicatePropertiesSpecified => "DuplicatePropertiesSpecified",
            EntityAlreadyExists => "EntityAlreadyExists",
            EntityTooLarge => "EntityTooLarge",
            InsufficientAccountPermissions => "InsufficientAccountPermissions",
            InternalError => "InternalError",
            InvalidAuthenticationInfo => "InvalidAuthenticationInfo",
            InvalidDuplicateRow => "InvalidDuplicateRow",
            InvalidHeaderValue => "InvalidHeaderValue",
            InvalidInput => "InvalidInput",
            InvalidQueryParameterValue => "InvalidQueryParameterValue",
            InvalidResourceName => "InvalidResourceName",
            InvalidUri => "InvalidUri",
            InvalidXmlDocument => "InvalidXmlDocument",
            MediaTypeNotSupported => "MediaTypeNotSupported",
            MethodNotAllowed => "MethodNotAllowed",
            MissingRequiredHeader => "MissingRequiredHeader",
            NoAuthenticationInformation => "NoAuthenticationInformation",
            NotImplemented => "NotImplemented",
            OperationTimedOut => "OperationTimedOut",
            OutOfRangeInput => "OutOfRangeInput",
            PropertiesNeedValue => "PropertiesNeedValue",
            PropertyNameInvalid => "PropertyNameInvalid",
            PropertyNameTooLong => "PropertyNameTooLong",
            PropertyValueTooLarge => "PropertyValueTooLarge",
            RequestBodyTooLarge => "RequestBodyTooLarge",
            RequestHeaderFieldsTooLarge => "RequestHeaderFieldsTooLarge",
            RequestTimeout => "RequestTimeout",
            RequestUriTooLong => "RequestUriTooLong",
            ResourceNotFound => "ResourceNotFound",
            ServerBusy => "ServerBusy",
            TableAlreadyExists => "TableAlreadyExists",
            TableBeingDeleted => "TableBeingDeleted",
            TableNotFound => "TableNotFound",
            TooManyProperties => "TooManyProperties",
            UpdateConditionNotSatisfied => "UpdateConditionNotSatisfied",
            XMethodIncorrectCount => "XMethodIncorrectCount",
            XMethodIncorrectValue => "XMethodIncorrectValue",
            XMethodNotUsingPost => "XMethodNotUsingPost",
        }
    }

    /// Returns the HTTP status the service answers with.
    pub fn status(self) -> u16 {
        use ErrorCode::*;
        match self {
            NoAuthenticationInformation | InvalidAuthenticationInfo => 401,
            AuthenticationFailed
            | AuthorizationFailure
            | AuthorizationPermissionMismatch
            | AuthorizationResourceTypeMismatch
            | AuthorizationServiceMismatch
            | AuthorizationProtocolMismatch
            | AuthorizationSourceIPMismatch
            | CorsPreflightFailure
            | InsufficientAccountPermissions => 403,
            ResourceNotFound | TableNotFound => 404,
            MethodNotAllowed => 405,
            EntityAlreadyExists | TableAlreadyExists | TableBeingDeleted => 409,
            UpdateConditionNotSatisfied => 412,
            RequestTimeout => 408,
            RequestBodyTooLarge => 413,
            RequestUriTooLong => 414,
            RequestHeaderFieldsTooLarge => 431,
            AtomFormatNotSupported | MediaTypeNotSupported => 415,
            InternalError | OperationTimedOut | DataCorrupted => 500,
            NotImplemented => 501,
            ServerBusy => 503,
            CommandsInBatchActOnDifferentPartitions
            | DuplicatePropertiesSpecified
            | EntityTooLarge
            | InvalidDuplicateRow
            | InvalidHeaderValue
            | InvalidInput
            | InvalidQueryParameterValue
            | InvalidResourceName
            | InvalidUri
            | InvalidXmlDocument
            | MissingRequiredHeader
            | OutOfRangeInput
            | PropertiesNeedValue
            | PropertyNameInvalid
            | PropertyNameTooLong
            | PropertyValueTooLarge
            | TooManyProperties
            | XMethodIncorrectCount
            | XMethodIncorrectValue
            | XMethodNotUsingPost => 400,
        }
    }

    /// Returns the service's default message for the code.
    pub fn default_message(self) -> &'static str {
        use ErrorCode::*;
        match self {
            AtomFormatNotSupported => "Atom format is not supported.",
            AuthenticationFailed => "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
            AuthorizationFailure => "This request is not authorized to perform this operation.",
            AuthorizationPermissionMismatch => "This request is not authorized to perform this operation using this permission.",
            AuthorizationResourceTypeMismatch => "This request is not authorized to perform this operation using this resource type.",
            AuthorizationServiceMismatch => "This request is not authorized to perform this operation using this service.",
            AuthorizationProtocolMismatch => "This request is not authorized to perform this operation using this protocol.",
            AuthorizationSourceIPMismatch => "This request is not authorized to perform this operation using this source IP.",
            CommandsInBatchActOnDifferentPartitions => "All commands in a batch must operate on same entity group.",
            CorsPreflightFailure => "CORS not enabled or no matching rule found for this request.",
            DataCorrupted => "The data directory is damaged: a stored block failed its checksum. Retrying will not help; restore the data directory from a backup.",
            DuplicatePropertiesSpecified => "A property is specified more than one time.",
            EntityAlreadyExists => "The specified entity already exists.",
            EntityTooLarge => "The entity is larger than the maximum size permitted.",
            InsufficientAccountPermissions => "Write operations are not allowed.",
            InternalError => "The server encountered an internal error. Please retry the request.",
            InvalidAuthenticationInfo => "Authentication information is not given in the correct format. Check the value of Authorization header.",
            InvalidDuplicateRow => "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.",
            InvalidHeaderValue => "The value for one of the HTTP headers is not in the correct format.",
            InvalidInput => "One of the request inputs is not valid.",
            InvalidQueryParameterValue => "Value for one of the query parameters specified in the request URI is invalid.",
            InvalidResourceName => "The specifed resource name contains invalid characters.",
            InvalidUri => "The requested URI does not represent any resource on the server.",
            InvalidXmlDocument => "XML specified is not syntactically valid.",
            MediaTypeNotSupported => "None of the provided media types are supported.",
            MethodNotAllowed => "The requested method is not allowed on the specified resource.",
            MissingRequiredHeader => "An HTTP header that's mandatory for this request is not specified.",
            NoAuthenticationInformation => "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
            NotImplemented => "The requested operation is not implemented on the specified resource.",
            OperationTimedOut => "The operation could not be completed within the permitted time.",
            OutOfRangeInput => "One of the request inputs is out of range.",
            PropertiesNeedValue => "Values have not been specified for all properties in the entity.",
            PropertyNameInvalid => "The property name is invalid.",
            PropertyNameTooLong => "The property name exceeds the maximum allowed length.",
            PropertyValueTooLarge => "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less.",
            RequestBodyTooLarge => "The request body is too large and exceeds the maximum permissible limit.",
            RequestHeaderFieldsTooLarge => "The request headers are too large.",
            RequestTimeout => "The request body did not arrive in time.",
            RequestUriTooLong => "The request URI is too long.",
            ResourceNotFound => "The specified resource does not exist.",
            ServerBusy => "The server is currently unable to receive requests. Please retry your request.",
            TableAlreadyExists => "The table specified already exists.",
            TableBeingDeleted => "The specified table is being deleted.",
            TableNotFound => "The table specified does not exist.",
            TooManyProperties => "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties.",
            UpdateConditionNotSatisfied => "The update condition specified in the request was not satisfied.",
            XMethodIncorrectCount => "More than one X-HTTP-Method is specified.",
            XMethodIncorrectValue => "The specified X-HTTP-Method is invalid.",
            XMethodNotUsingPost => "The request uses X-HTTP-Method with an HTTP verb other than POST.",
        }
    }
}
