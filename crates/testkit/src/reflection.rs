//! The test server's gRPC server reflection (`grpc.reflection.v1` and
//! `v1alpha`, as grpc-go serves both) and the descriptors it serves:
//! `echo.proto` (service `test.echo.Echo`: `Say`, unary, and `Count`,
//! server-streaming; service `test.echo.Gone`, whose `Call` the server
//! does not implement, as an older server's) importing `hello.proto`
//! (message `test.echo.Hello`).
//! A question for the file declaring a symbol is answered with that file
//! alone, so that a client must ask for the imports by name, as it must
//! of servers that leave them out.
//!
//! A call with `x-no-reflection: 1` in its metadata is answered
//! UNIMPLEMENTED, as by a server without reflection.

use prost::Message;
use prost_types::{
    field_descriptor_proto::{Label, Type},
    DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
    MethodDescriptorProto, ServiceDescriptorProto,
};

/// The reflection service's paths.
pub(crate) fn is_reflection(path: &str) -> bool {
    path == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
        || path == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
}

/// `ServerReflectionRequest`, the questions this server answers.
#[derive(Clone, PartialEq, Message)]
struct Question {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(string, optional, tag = "3")]
    file_by_filename: Option<String>,
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
}

/// `ServerReflectionResponse` with a `FileDescriptorResponse` (4) or an
/// `ErrorResponse` (7).
#[derive(Clone, PartialEq, Message)]
struct Answer {
    #[prost(string, tag = "1")]
    valid_host: String,
    #[prost(message, optional, tag = "4")]
    files: Option<Files>,
    #[prost(message, optional, tag = "7")]
    error: Option<Refusal>,
}

#[derive(Clone, PartialEq, Message)]
struct Files {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct Refusal {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

fn field(name: &str, number: i32, label: Label, kind: Type) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        label: Some(label as i32),
        r#type: Some(kind as i32),
        json_name: Some(name.into()),
        ..Default::default()
    }
}

fn method(name: &str, server_streaming: bool) -> MethodDescriptorProto {
    MethodDescriptorProto {
        name: Some(name.into()),
        input_type: Some(".test.echo.Hello".into()),
        output_type: Some(".test.echo.Hello".into()),
        server_streaming: Some(server_streaming),
        ..Default::default()
    }
}

/// `hello.proto` and `echo.proto`.
fn files() -> [FileDescriptorProto; 2] {
    let hello = FileDescriptorProto {
        name: Some("hello.proto".into()),
        package: Some("test.echo".into()),
        message_type: vec![DescriptorProto {
            name: Some("Hello".into()),
            field: vec![
                field("name", 1, Label::Optional, Type::String),
                field("times", 2, Label::Optional, Type::Int32),
                field("tags", 3, Label::Repeated, Type::String),
            ],
            ..Default::default()
        }],
        syntax: Some("proto3".into()),
        ..Default::default()
    };
    let echo = FileDescriptorProto {
        name: Some("echo.proto".into()),
        package: Some("test.echo".into()),
        dependency: vec!["hello.proto".into()],
        service: vec![
            ServiceDescriptorProto {
                name: Some("Echo".into()),
                method: vec![method("Say", false), method("Count", true)],
                ..Default::default()
            },
            ServiceDescriptorProto {
                name: Some("Gone".into()),
                method: vec![method("Call", false)],
                ..Default::default()
            },
        ],
        syntax: Some("proto3".into()),
        ..Default::default()
    };
    [hello, echo]
}

/// The test server's descriptors as a `FileDescriptorSet`, as
/// `-proto-set` reads one.
pub fn echo_descriptor_set() -> Vec<u8> {
    FileDescriptorSet {
        file: files().to_vec(),
    }
    .encode_to_vec()
}

/// The answers (each a message, unframed) to the questions framed in
/// `body`.
pub(crate) fn answers(body: &[u8]) -> Vec<Vec<u8>> {
    let [hello, echo] = files();
    let mut out = Vec::new();
    let mut rest = body;
    while rest.len() >= 5 {
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let Some(message) = rest.get(5..5 + len) else {
            break;
        };
        rest = &rest[5 + len..];
        let Ok(q) = Question::decode(message) else {
            break;
        };
        let file = match (&q.file_by_filename, &q.file_containing_symbol) {
            (Some(f), _) if f == "hello.proto" => Some(&hello),
            (Some(f), _) if f == "echo.proto" => Some(&echo),
            (_, Some(s)) if s.starts_with("test.echo.Echo") || s.starts_with("test.echo.Gone") => {
                Some(&echo)
            }
            (_, Some(s)) if s == "test.echo.Hello" => Some(&hello),
            _ => None,
        };
        let answer = match file {
            Some(f) => Answer {
                valid_host: q.host,
                files: Some(Files {
                    file_descriptor_proto: vec![f.encode_to_vec()],
                }),
                error: None,
            },
            None => Answer {
                valid_host: q.host,
                files: None,
                error: Some(Refusal {
                    error_code: 5,
                    error_message: "not found".into(),
                }),
            },
        };
        out.push(answer.encode_to_vec());
    }
    out
}
