// Every method of the Worker service, served so that a caller without a valid token is refused
// before a byte of its request is read, and each method's request is held to its own size
// limit. Internal to coordinator/.
//
// Why a generic service: gRPC's synchronous and callback unary handlers (and server
// interceptors, which run once a call is handed to them) get a call only once its whole request
// has arrived, and gRPC 1.51 reads a request of any size before it applies the server's max
// receive size (a 64 MiB request was read in full, then RESOURCE_EXHAUSTED). An
// AuthMetadataProcessor runs before, but gRPC aborts when one is set on insecure credentials
// (the plaintext loopback listener). A callback generic service gets the call with its
// metadata only; the request is read when the handler asks for it. So the token is checked
// first and a refusal (UNAUTHENTICATED, PERMISSION_DENIED) finishes the call unread: only what
// the client had sent within the HTTP/2 flow-control window reaches the server.
//
// Sizes: an authorised request is read whole (gRPC hands over complete messages only), up to
// the server's max receive size; one longer than its method's `max_request_bytes` is then
// refused (RESOURCE_EXHAUSTED) before it is parsed.
//
// Threads: gRPC calls Create and the handlers on its callback threads, so a handler must not
// block: it answers through its `done` (from any thread, also before it returns), and one that
// waits (for the database, a long-poll) hands that work on (the coordinator's reporter, a
// HandlerPool).
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tuna::coordinator {

// OK to read the request; any other status refuses the call with it, unread.
using Authorize = std::function<grpc::Status(const grpc::ServerContextBase& ctx,
                                             const std::string& method)>;
// Answers a call, exactly once: OK (then `*reply` holds the reply's bytes) or the status.
using Done = std::function<void(grpc::Status)>;
// Handles one request (the serialized request message): fills `*reply` (valid until `done`) and
// calls `done`. `ctx` is valid until `done`. Must not block (see Threads).
using RawHandler = std::function<void(const grpc::ServerContextBase& ctx,
                                      const grpc::ByteBuffer& request, grpc::ByteBuffer* reply,
                                      Done done)>;

struct RawMethod {
  size_t max_request_bytes = 0;  // 0: only the server's max receive size
  RawHandler handle;
};

// Methods served to anyone, unread and unauthorised (the gRPC health service,
// health_service.h): the reactor of a call, or nullptr when its method is not one of them.
using OpenMethods =
    std::function<grpc::ServerGenericBidiReactor*(grpc::GenericCallbackServerContext* ctx)>;

// `methods` by full method path ("/tuna.v1.Worker/Report"), then `open`'s; other paths are
// UNIMPLEMENTED (unread). Register as the server's generic service; no service of the server may
// register these methods itself. The functions must outlive the service.
std::unique_ptr<grpc::CallbackGenericService> MakeUnreadRefusalService(
    Authorize authorize, std::map<std::string, RawMethod> methods, OpenMethods open);

}  // namespace tuna::coordinator
