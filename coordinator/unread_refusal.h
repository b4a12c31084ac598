// Methods whose requests may be large (Report, PutKernels), served so that a caller without a
// valid token is refused before a byte of its request is read. Internal to coordinator/.
//
// Why a generic service: gRPC's synchronous (and callback) unary handlers get a call only once
// its whole request has arrived, and gRPC 1.51 reads a request of any size before it applies
// the server's max receive size (a 64 MiB request was read in full, then RESOURCE_EXHAUSTED).
// A callback generic service gets the call with its metadata only; the request is read when
// the handler asks for it. So the token is checked first and a refusal (UNAUTHENTICATED,
// PERMISSION_DENIED) finishes the call unread: only what the client had sent within the HTTP/2
// flow-control window reaches the server.
//
// Threads: gRPC calls Create on its callback threads; an authorised request is handled on a
// thread of its own (a handler may wait for the database), which finishes the call.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tuna::coordinator {

// OK to read the request; any other status refuses the call with it, unread.
using Authorize = std::function<grpc::Status(const grpc::ServerContextBase& ctx,
                                             const std::string& method)>;
// Handles one request (the serialized request message): the reply's bytes or the status.
using RawHandler = std::function<grpc::Status(const grpc::ServerContextBase& ctx,
                                              const grpc::ByteBuffer& request,
                                              grpc::ByteBuffer* reply)>;

// `handlers` by full method path ("/tuna.v1.Worker/Report"); other paths are UNIMPLEMENTED.
// Register on the server that serves the rest of the service, whose generated class marks these
// methods generic (v1::Worker::WithGenericMethod_*). The functions must outlive the service.
std::unique_ptr<grpc::CallbackGenericService> MakeUnreadRefusalService(
    Authorize authorize, std::map<std::string, RawHandler> handlers);

}  // namespace tuna::coordinator
