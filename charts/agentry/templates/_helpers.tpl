{{/* Names. The `app.kubernetes.io/name` labels of the API and operator pods are fixed
     (agentry-api, agentry-operator): every organization's default NetworkPolicy admits exactly
     those pods of the control namespace (operator/runtimes/network-policy.ts). */}}
{{- define "agentry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agentry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else if contains (include "agentry.name" .) .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "agentry.name" .) | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agentry.api.name" -}}{{ include "agentry.fullname" . }}-api{{- end -}}
{{- define "agentry.operator.name" -}}{{ include "agentry.fullname" . }}-operator{{- end -}}
{{- define "agentry.egress.name" -}}{{ include "agentry.fullname" . }}-egress{{- end -}}

{{/* The egress proxy as workspaces reach it (AGENTRY_EGRESS_PROXY_URL of the operator). */}}
{{- define "agentry.egress.url" -}}
{{- printf "http://%s.%s.svc:%d" (include "agentry.egress.name" .) .Release.Namespace (int .Values.egress.port) -}}
{{- end -}}

{{- define "agentry.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: agentry
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "agentry.api.selectorLabels" -}}
app.kubernetes.io/name: agentry-api
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: api
{{- end -}}

{{- define "agentry.operator.selectorLabels" -}}
app.kubernetes.io/name: agentry-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* Fixed like the others: workspaces' NetworkPolicies admit exactly these pods on the proxy port. */}}
{{- define "agentry.egress.selectorLabels" -}}
app.kubernetes.io/name: agentry-egress
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: egress
{{- end -}}

{{- define "agentry.egress.labels" -}}
{{ include "agentry.commonLabels" . }}
{{ include "agentry.egress.selectorLabels" . }}
{{- end -}}

{{- define "agentry.api.labels" -}}
{{ include "agentry.commonLabels" . }}
{{ include "agentry.api.selectorLabels" . }}
{{- end -}}

{{- define "agentry.operator.labels" -}}
{{ include "agentry.commonLabels" . }}
{{ include "agentry.operator.selectorLabels" . }}
{{- end -}}

{{- define "agentry.labels" -}}
{{ include "agentry.commonLabels" . }}
app.kubernetes.io/name: agentry
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agentry.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Base URL clients reach the API at: set, else the first Ingress host, else the Service. */}}
{{- define "agentry.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if and .Values.api.ingress.enabled .Values.api.ingress.hosts -}}
{{- $host := (first .Values.api.ingress.hosts).host -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.api.ingress.tls) 0)) $host -}}
{{- else -}}
{{- include "agentry.internalUrl" . -}}
{{- end -}}
{{- end -}}

{{/* The API Service as workspaces and the operator reach it inside the cluster (AGENTRY_INTERNAL_URL). */}}
{{- define "agentry.internalUrl" -}}
{{- printf "http://%s.%s.svc:%d" (include "agentry.api.name" .) .Release.Namespace (int .Values.api.service.port) -}}
{{- end -}}

{{- define "agentry.awsSecretName" -}}
{{- if .Values.aws.existingSecret -}}
{{- .Values.aws.existingSecret -}}
{{- else -}}
{{- include "agentry.fullname" . }}-aws
{{- end -}}
{{- end -}}

{{- define "agentry.awsCredentialsEnabled" -}}
{{- if or .Values.aws.existingSecret .Values.aws.accessKeyId -}}true{{- end -}}
{{- end -}}

{{- define "agentry.filesystemObjectStore" -}}
{{- if eq .Values.objectStore.type "filesystem" -}}true{{- end -}}
{{- end -}}

{{/* Settings the API server and the operator share (platform/config.ts names every variable). */}}
{{- define "agentry.env" -}}
- name: AGENTRY_STORE
  value: kubernetes
- name: AGENTRY_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: AGENTRY_HOST
  value: "0.0.0.0"
- name: AGENTRY_PUBLIC_URL
  value: {{ include "agentry.publicUrl" . | quote }}
- name: AGENTRY_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: AGENTRY_DATA_DIR
  value: /var/lib/agentry
- name: AGENTRY_DEFAULT_RUNTIME
  value: {{ .Values.runtime.default | quote }}
- name: AGENTRY_RUNTIMES
  value: {{ join "," .Values.runtime.enabled | quote }}
- name: AGENTRY_RUNNER_IMAGE
  value: {{ .Values.workloads.runnerImage | quote }}
- name: AGENTRY_LAKE_IMAGE
  value: {{ .Values.workloads.lakeImage | quote }}
- name: AGENTRY_WORKLOAD_CPU
  value: {{ .Values.workloads.cpu | quote }}
- name: AGENTRY_WORKLOAD_MEMORY
  value: {{ .Values.workloads.memory | quote }}
- name: AGENTRY_WORKLOAD_DISK
  value: {{ .Values.workloads.disk | quote }}
{{- with .Values.workloads.storageClass }}
- name: AGENTRY_STORAGE_CLASS
  value: {{ . | quote }}
{{- end }}
{{- with .Values.workloads.vmDiskPullMethod }}
- name: AGENTRY_VM_DISK_PULL_METHOD
  value: {{ . | quote }}
{{- end }}
{{- with .Values.workloads.nodeSelector }}
- name: AGENTRY_WORKLOAD_NODE_SELECTOR
  value: {{ toJson . | quote }}
{{- end }}
{{- with .Values.workloads.tolerations }}
- name: AGENTRY_WORKLOAD_TOLERATIONS
  value: {{ toJson . | quote }}
{{- end }}
{{- with .Values.workloads.egressAllow }}
- name: AGENTRY_WORKLOAD_EGRESS_ALLOW
  value: {{ join "," . | quote }}
{{- end }}
{{- with .Values.workloads.dnsServers }}
- name: AGENTRY_WORKLOAD_DNS_SERVERS
  value: {{ join "," . | quote }}
{{- end }}
{{- if .Values.executors.definitions }}
- name: AGENTRY_EXECUTORS_FILE
  value: /etc/agentry/executors/executors.yaml
{{- end }}
{{- if .Values.skills.catalog }}
- name: AGENTRY_SKILLS_FILE
  value: /etc/agentry/skills/skills.yaml
{{- end }}
- name: AGENTRY_WEBHOOK_PRIVATE_TARGETS
  value: {{ .Values.webhooks.allowPrivateTargets | quote }}
{{- with .Values.webhooks.retrySchedule }}
- name: AGENTRY_WEBHOOK_RETRY_SCHEDULE
  value: {{ . | quote }}
{{- end }}
- name: AGENTRY_DELETED_TASK_RETENTION
  value: {{ .Values.tasks.deletedRetention | quote }}
- name: AGENTRY_OBJECT_STORE
  value: {{ .Values.objectStore.type | quote }}
{{- if eq .Values.objectStore.type "s3" }}
- name: AGENTRY_S3_BUCKET
  value: {{ .Values.objectStore.s3.bucket | quote }}
- name: AGENTRY_S3_REGION
  value: {{ .Values.objectStore.s3.region | quote }}
- name: AGENTRY_S3_FORCE_PATH_STYLE
  value: {{ .Values.objectStore.s3.forcePathStyle | quote }}
- name: AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT
  value: {{ .Values.objectStore.s3.downloadRedirect | default "auto" | quote }}
{{- with .Values.objectStore.s3.endpoint }}
- name: AGENTRY_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end }}
- name: AGENTRY_LAKE_CONNECTORS
  value: {{ join "," .Values.lake.connectors | quote }}
- name: AGENTRY_LAKE_PRIVATE_TARGETS
  value: {{ .Values.lake.allowPrivateTargets | quote }}
- name: AGENTRY_LAKE_MAX_RESULT_BYTES
  value: {{ .Values.lake.maxResultBytes | int64 | quote }}
- name: AGENTRY_SQS_ENABLED
  value: {{ .Values.sqs.enabled | quote }}
- name: AGENTRY_SQS_REGION
  value: {{ .Values.sqs.region | quote }}
- name: AGENTRY_SQS_QUEUE_PREFIX
  value: {{ .Values.sqs.queuePrefix | quote }}
{{- with .Values.sqs.endpoint }}
- name: AGENTRY_SQS_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- with .Values.sqs.sourceAccounts }}
- name: AGENTRY_SQS_SOURCE_ACCOUNTS
  value: {{ join "," . | quote }}
{{- end }}
{{- if include "agentry.awsCredentialsEnabled" . }}
{{- /* The AWS SDK's default chain reads these; without them it uses IRSA / pod identity. */}}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ include "agentry.awsSecretName" . }}
      key: {{ .Values.aws.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentry.awsSecretName" . }}
      key: {{ .Values.aws.secretAccessKeyKey }}
{{- end }}
{{- with .Values.aws.region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Volumes both programs mount: a writable /tmp (the root filesystem is read-only), the data
     directory, and the executor definitions when given. */}}
{{- define "agentry.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /var/lib/agentry
{{- if .Values.executors.definitions }}
- name: executors
  mountPath: /etc/agentry/executors
  readOnly: true
{{- end }}
{{- if .Values.skills.catalog }}
- name: skills
  mountPath: /etc/agentry/skills
  readOnly: true
{{- end }}
{{- end -}}

{{- define "agentry.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- if .dataClaim }}
- name: data
  persistentVolumeClaim:
    claimName: {{ .dataClaim }}
{{- else }}
- name: data
  emptyDir:
    sizeLimit: {{ .root.Values.objectStore.filesystem.emptyDirSizeLimit }}
{{- end }}
{{- if .root.Values.executors.definitions }}
- name: executors
  configMap:
    name: {{ include "agentry.fullname" .root }}-executors
{{- end }}
{{- if .root.Values.skills.catalog }}
- name: skills
  configMap:
    name: {{ include "agentry.fullname" .root }}-skills
{{- end }}
{{- end -}}

{{- define "agentry.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "agentry.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Checks across values that a JSON schema cannot express readably. */}}
{{- define "agentry.validate" -}}
{{- if not (has .Values.runtime.default .Values.runtime.enabled) -}}
{{- fail (printf "runtime.default %q must be one of runtime.enabled %v" .Values.runtime.default .Values.runtime.enabled) -}}
{{- end -}}
{{- if and (eq .Values.objectStore.type "s3") (not .Values.objectStore.s3.bucket) -}}
{{- fail "objectStore.s3.bucket is required when objectStore.type is s3" -}}
{{- end -}}
{{- if and (eq .Values.objectStore.type "filesystem") (not .Values.objectStore.filesystem.existingClaim) (or (gt (int .Values.api.replicas) 1) .Values.api.autoscaling.enabled) -}}
{{- fail "objectStore.type filesystem keeps uploads on one API pod's disk: use api.replicas 1 (no autoscaling), or objectStore.filesystem.existingClaim (a ReadWriteMany claim), or objectStore.type s3" -}}
{{- end -}}
{{- if and .Values.aws.accessKeyId (not .Values.aws.secretAccessKey) -}}
{{- fail "aws.secretAccessKey is required with aws.accessKeyId" -}}
{{- end -}}
{{- if and .Values.executors.credentials (not .Values.organizations) -}}
{{- fail "executors.credentials are written into the namespaces of `organizations`: name at least one organization, or create the Secrets agentry-executor-<name> yourself" -}}
{{- end -}}
{{- if and (gt (int .Values.operator.replicas) 1) (not .Values.operator.leaderElection) -}}
{{- fail "operator.replicas above 1 needs operator.leaderElection: two operators would reconcile the same objects" -}}
{{- end -}}
{{- end -}}
