{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "gardener-scheduler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of every resource: the release name, plus the chart name unless it contains it. */}}
{{- define "gardener-scheduler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gardener-scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gardener-scheduler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gardener-scheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gardener-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/part-of: gardener
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "gardener-scheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gardener-scheduler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gardener-scheduler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Where the kubeconfig Secret is mounted when kubeconfig.secretName is set. */}}
{{- define "gardener-scheduler.kubeconfigDir" -}}
/etc/gardener-scheduler/kubeconfig
{{- end }}

{{- define "gardener-scheduler.configDir" -}}
/etc/gardener-scheduler/config
{{- end }}

{{- define "gardener-scheduler.configFile" -}}
schedulerconfiguration.yaml
{{- end }}

{{/*
The SchedulerConfiguration as YAML: values.config, then configFile (an existing configuration
file, merged key by key over it), then the fields the chart owns. Templates read every setting
through this (`include ... | fromYaml`), so ports, the Lease and the binding mode in the manifests
always match the file the binary loads. With existingConfigMap.name the file is not the chart's:
these settings come from values.config alone, and the container's --expect-* flags make the
binary refuse a file that disagrees.
*/}}
{{- define "gardener-scheduler.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- if and .Values.existingConfigMap.name .Values.configFile }}
{{- fail "existingConfigMap.name and configFile exclude each other: the pods read the configuration from the existing ConfigMap, so the chart renders none" }}
{{- end }}
{{- if .Values.configFile }}
{{- $file := fromYaml .Values.configFile }}
{{- if hasKey $file "Error" }}
{{- fail (printf "configFile: not a YAML mapping: %s" $file.Error) }}
{{- end }}
{{- with $file.apiVersion }}
{{- if ne . "scheduler.config.gardener.cloud/v1alpha1" }}
{{- fail (printf "configFile: apiVersion %q is not scheduler.config.gardener.cloud/v1alpha1" .) }}
{{- end }}
{{- end }}
{{- with $file.kind }}
{{- if ne . "SchedulerConfiguration" }}
{{- fail (printf "configFile: kind %q is not SchedulerConfiguration" .) }}
{{- end }}
{{- end }}
{{- $cfg = mergeOverwrite $cfg (omit $file "apiVersion" "kind") }}
{{- end }}
{{- /* Zero values mean upstream's defaults (the binary applies them too); the manifests read
these fields, so they get the defaulted values as well. */}}
{{- if not (int $cfg.server.healthProbes.port) }}
{{- $_ := set $cfg.server.healthProbes "port" 10251 }}
{{- end }}
{{- if not (int $cfg.server.metrics.port) }}
{{- $_ := set $cfg.server.metrics "port" 19251 }}
{{- end }}
{{- if not $cfg.leaderElection.resourceName }}
{{- $_ := set $cfg.leaderElection "resourceName" "gardener-scheduler-leader-election" }}
{{- end }}
{{- if not $cfg.leaderElection.resourceNamespace }}
{{- $_ := set $cfg.leaderElection "resourceNamespace" .Release.Namespace }}
{{- end }}
{{- if .Values.kubeconfig.secretName }}
{{- $_ := set $cfg.clientConnection "kubeconfig" (printf "%s/%s" (include "gardener-scheduler.kubeconfigDir" .) .Values.kubeconfig.secretKey) }}
{{- end -}}
apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
{{ toYaml (omit $cfg "apiVersion" "kind") }}
{{- end }}

{{/* The ConfigMap the pods mount: the one the chart renders, or existingConfigMap.name. */}}
{{- define "gardener-scheduler.configMapName" -}}
{{- default (printf "%s-config" (include "gardener-scheduler.fullname" .)) .Values.existingConfigMap.name }}
{{- end }}

{{/* Fails the render on combinations that cannot work, naming the values to change. */}}
{{- define "gardener-scheduler.validate" -}}
{{- $cfg := include "gardener-scheduler.config" . | fromYaml }}
{{- if and (gt (int .Values.replicaCount) 1) (not $cfg.leaderElection.leaderElect) }}
{{- fail "replicaCount > 1 requires config.leaderElection.leaderElect: true (otherwise every replica schedules)" }}
{{- end }}
{{- if not (and .Values.resources .Values.resources.requests) }}
{{- fail "resources.requests must be set (cpu and memory)" }}
{{- end }}
{{- if lt (int .Values.replicaCount) 0 }}
{{- fail "replicaCount must be >= 0" }}
{{- end }}
{{- if .Values.existingConfigMap.name }}
{{- if .Values.extraFiles }}
{{- fail "extraFiles cannot be combined with existingConfigMap.name: put the files into that ConfigMap, beside schedulerconfiguration.yaml" }}
{{- end }}
{{- end }}
{{- if not (has $cfg.schedulers.shoot.bindingMode (list "Binding" "Patch")) }}
{{- fail (printf "config.schedulers.shoot.bindingMode: unsupported value %q: supported values: \"Binding\", \"Patch\"" (toString $cfg.schedulers.shoot.bindingMode)) }}
{{- end }}
{{- end }}

{{/*
"true" when a profile of the configuration uses the CarbonIntensity priority: only then does the
scheduler watch carbon-intensity ConfigMaps, in every namespace.
*/}}
{{- define "gardener-scheduler.usesCarbon" -}}
{{- $cfg := include "gardener-scheduler.config" . | fromYaml }}
{{- $lists := list ($cfg.schedulers.shoot.priorities | default list) }}
{{- range ($cfg.schedulers.shoot.profiles | default list) }}
{{- if and .profile .profile.priorities }}
{{- $lists = append $lists .profile.priorities }}
{{- end }}
{{- end }}
{{- $uses := false }}
{{- range $lists }}
{{- range . }}
{{- if eq .name "CarbonIntensity" }}
{{- $uses = true }}
{{- end }}
{{- end }}
{{- end }}
{{- if $uses }}true{{ end }}
{{- end }}
