-- Argo CD health of an agentry.dev ContextLake: Healthy while it serves this generation's
-- configuration, Suspended while hibernated (paused, or never started: the first query starts it),
-- Degraded when its workload, configuration, a dataset or its S3 notifications failed, Progressing
-- while it starts or loads and while the operator has not observed this generation.
local hs = { status = "Progressing", message = "waiting for the operator" }
local status = obj.status
if status == nil or status.observedGeneration == nil or status.vmStatus == nil then
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.message = "waiting for the operator to observe generation " .. tostring(obj.metadata.generation)
  return hs
end
local conditions = {}
for _, condition in ipairs(status.conditions or {}) do
  conditions[condition.type] = condition
end
local ready = conditions["Ready"] or {}
local notifications = conditions["NotificationsReady"]
local failedDataset = nil
for name, dataset in pairs(status.datasets or {}) do
  if dataset.status == "error" and (failedDataset == nil or name < failedDataset) then
    failedDataset = name
  end
end
if status.vmStatus == "error" or ready.reason == "ConfigInvalid" then
  hs.status = "Degraded"
  hs.message = ready.message or "the lake server failed"
elseif status.vmStatus == "paused" or status.vmStatus == "not_provisioned" then
  hs.status = "Suspended"
  hs.message = ready.message or "hibernated: the first query starts it"
elseif notifications ~= nil and notifications.status == "False" then
  hs.status = "Degraded"
  hs.message = notifications.message or "the S3 notification queue failed"
elseif failedDataset ~= nil then
  hs.status = "Degraded"
  hs.message = "dataset " .. failedDataset .. ": " .. (status.datasets[failedDataset].error or "loading failed")
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "serving"
else
  hs.message = ready.message or "the lake server is starting"
end
return hs
