// The GPU backends' event timing (their Device::TimeRuns): a start and a stop event per run,
// recorded around each launch on the default stream, then the milliseconds between them. Only
// the vendor calls differ (EventCalls). Internal to the backends; not thread-safe beyond what the
// calling Device allows (one caller per device context).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::backend {

// The vendor's event calls, each returning its status as the device maps it.
template <typename Event>
struct EventCalls {
  std::function<absl::Status(Event*)> create;
  std::function<absl::Status(Event)> record;  // on the default stream
  std::function<absl::Status(Event)> synchronize;
  std::function<absl::Status(float*, Event, Event)> elapsed_ms;
  std::function<void(Event)> destroy;  // errors ignored
};

// `repetitions` (> 0) runs of `launch`, each between its start and stop event; `before_each`
// (may be empty) runs before each, untimed. The first error stops the runs and is returned; the
// events are destroyed either way.
template <typename Event>
absl::StatusOr<std::vector<double>> TimeWithEvents(const EventCalls<Event>& calls,
                                                   const std::function<absl::Status()>& launch, int repetitions,
                                                   const std::function<absl::Status()>& before_each) {
  std::vector<Event> events;
  absl::Status st;
  for (int i = 0; i < 2 * repetitions && st.ok(); ++i) {
    Event e = nullptr;
    st = calls.create(&e);
    if (st.ok()) events.push_back(e);
  }
  for (int i = 0; i < repetitions && st.ok(); ++i) {
    if (before_each) st = before_each();
    if (st.ok()) st = calls.record(events[2 * i]);
    if (st.ok()) st = launch();
    if (st.ok()) st = calls.record(events[2 * i + 1]);
  }
  if (st.ok()) st = calls.synchronize(events.back());
  std::vector<double> ms;
  for (int i = 0; i < repetitions && st.ok(); ++i) {
    float t = 0;
    st = calls.elapsed_ms(&t, events[2 * i], events[2 * i + 1]);
    ms.push_back(t);
  }
  for (Event e : events) calls.destroy(e);
  if (!st.ok()) return st;
  return ms;
}

}  // namespace tuna::backend
