{{- define "extres.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "extres.fullname" -}}
{{- if .Values.fullnameOverride -}}{{ .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else -}}{{- $name := include "extres.name" . -}}
{{- if contains $name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}
{{- end -}}

{{- define "extres.labels" -}}
app.kubernetes.io/name: {{ include "extres.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "extres.selectorLabels" -}}
app.kubernetes.io/name: {{ include "extres.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "extres.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "extres.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- /* Does the app's own service account write? Only in service-account mode without readOnly. */ -}}
{{- define "extres.saWrites" -}}
{{- if and (eq .Values.auth.mode "service-account") (not .Values.auth.readOnly) -}}true{{- end -}}
{{- end -}}

{{- define "extres.subjects" -}}
{{- range .groups }}
  - kind: Group
    apiGroup: rbac.authorization.k8s.io
    name: {{ . | quote }}
{{- end }}
{{- range .users }}
  - kind: User
    apiGroup: rbac.authorization.k8s.io
    name: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Non-empty when auth.trustedProxies names an address other than loopback (an ingress
     controller, rather than only a sidecar proxy). */}}
{{- define "extres.proxiesBeyondLoopback" -}}
{{- range .Values.auth.trustedProxies }}
{{- if not (or (hasPrefix "127." .) (hasPrefix "::1" .)) }}yes{{ end }}
{{- end }}
{{- end }}

{{/* The peers believed for the X-Forwarded-For entry they add (EXTRES_FORWARDERS): every one,
     when the NetworkPolicy admits only the ingress controller; else none. */}}
{{- define "extres.forwarders" -}}
{{- if and .Values.ingress.enabled .Values.ingress.trustForwardedFor .Values.networkPolicy.enabled }}0.0.0.0/0,::/0{{ end }}
{{- end }}

{{/* devicePluginResources as one RE2 alternation: each glob quoted, then "*" any text and "?" one
     character (as fnmatch reads them in the dashboard). */}}
{{- define "extres.pluginRegex" -}}
{{- $parts := list -}}
{{- range .Values.devicePluginResources -}}
{{- $parts = append $parts (regexQuoteMeta . | replace "\\*" ".*" | replace "\\?" ".") -}}
{{- end -}}
{{- join "|" $parts -}}
{{- end }}
